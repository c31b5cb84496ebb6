"""Counterfactual calls (runs in the child): the evidence that a result was computed from the
placed value, not from the original.

A *capturing* call (the function on other values of one argument) keeps what each placing
operation received (an eager device_put onto the sharding judged, a sharding constraint or
shard_map, a jitted function at the operands it places); a *feeding* call (the function on
the original arguments) hands the same operations, in the same order, those captured values
instead. A result computed from the placed values then equals the capturing call's; one
computed from the originals (``0 *`` the placed array, NumPy on the original) does not.
Moving the original x onto another sharding is not fed: it is not moving the placed x.
The routes that place (``route_eager``, ``route_jit``) pass their operands through
``interceptor`` while a swap is set.
"""
from __future__ import annotations

from typing import Any, Callable


class Swap:
    """One counterfactual call: ``capturing`` keeps every value a placing operation receives
    (in ``values``); otherwise each is replaced, in order, by the captured one of the same
    shape and dtype. ``onto``, ``shape`` and ``turn`` say which eager device_put counts
    (:meth:`judged`); ``count`` how many values were met (captured, or fed)."""

    def __init__(self, capturing: bool, onto: Callable[[Any], bool], shape: tuple[int, ...] | None,
                 turn: int | None, values: list[Any] | None = None) -> None:
        self.capturing, self.onto, self.shape, self.turn = capturing, onto, shape, turn
        self.values = [] if values is None else values
        self.count, self.puts = 0, 0

    def judged(self, value: Any, target: Any) -> bool:
        """Whether this eager device_put is the one judged: onto its sharding, of its shape (not,
        say, the result placed afterwards), and the ``turn``-th such one (all when None)."""
        if not self.onto(target) or (self.shape is not None and tuple(getattr(value, "shape", ())) != self.shape):
            return False
        self.puts += 1
        return self.turn is None or self.puts - 1 == self.turn

    def meet(self, value: Any, kept: Any = None) -> Any:
        """What a placing operation gets in place of ``value``; capturing, ``kept`` (a copy of
        ``value``, when given) is what a feeding call will hand the same operation."""
        if self.capturing:
            self.values.append(value if kept is None else kept)
            self.count += 1
            return value
        if self.count < len(self.values):
            other = self.values[self.count]
            self.count += 1
            if other.shape == value.shape and other.dtype == value.dtype:
                return other
        return value


def interceptor(swap: list[Swap | None], array_class: type, host_array: type) -> Callable[..., Any]:
    """``intercepted(values, positions=None)``: ``values`` as a placing operation receives them,
    kept (capturing) or replaced by the captured ones (feeding), at ``positions`` (all when
    None); arrays only (JAX's, or NumPy's ``host_array``). A JAX array is captured as a copy:
    placing may keep its buffer, which a jitted step that donates the placed value then frees
    (an honest ``donate_argnums`` on placed params), and the feeding call needs it whole. The
    copy runs inside the route's hook, where JAX's own operations are not recorded. It is a
    device-to-device copy of the buffers (``device_put(..., may_alias=False)``, ~0.3 ms), not
    ``Array.copy``, a compiled program JAX builds for each new shape (~13 ms in every child)."""
    from jax import device_put  # JAX's own, taken when the routes are installed (before any submission)

    def kept(value: Any) -> Any:
        # where JAX cannot copy it here (inside an eager shard_map's own trace, under JAX 0.12),
        # the value itself is kept, as before: a copy that fails must not fail the call
        try:
            made = device_put(value, may_alias=False)  # its own sharding, committed or not
        except Exception:
            return None
        return made if type(made) is array_class and made is not value else None

    def intercepted(values: Any, positions: Any = None) -> Any:
        job = swap[0]
        out = list(values)
        for i, value in enumerate(out):
            if (positions is None or i in positions) and type(value) in (array_class, host_array):
                out[i] = job.meet(value, kept(value) if job.capturing and type(value) is array_class else None)
        return tuple(out) if isinstance(values, tuple) else out
    return intercepted
