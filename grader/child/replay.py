"""Counterfactual replays (runs in the child): would the result of a fully recorded call have
changed had a value it placed held other values?

The feeding call (``grader.child.swap``) answers by calling the submission again with its
placing operation handed other values; a submission can notice that (its placed copy no
longer equals its argument) and be honest only then. A replay never runs the submission's
Python: it runs again the operations the call recorded, in order (each eager device_put,
jitted program, eager primitive and eager shard_map, as the call bound them), with the placed
value replaced, and reads what became of the returned leaves. Control flow the submission
chose while its call ran stays as it chose it: comparing the placed copy with the argument
changes nothing here, and a result that reaches the placed copy only through ``0 *`` does not
change.

A replay answers only when it is sound: every operation reached by a replaced value is
re-run, no value went through the host (a pull, then a value given back, breaks the chain the
recorder can see; a pull alone, ``bool(jnp.all(placed == x))``, only chose the path the
replay follows), and no transformation's tracer holds one (an eager ``jax.grad`` records
tracers, not arrays). Otherwise it says nothing (None), and the feeding call decides.
"""
from __future__ import annotations

from typing import Any

MAX_REPLAYED = 8  # placements replayed in one call


class Replayer:
    """What a replay runs with: the grader's own JAX and NumPy (taken before the submission),
    JAX's jit primitive, its jaxpr evaluator and tracer class."""

    def __init__(self, jax: Any, np: Any) -> None:
        from jax._src import core, pjit
        self.jax, self.np = jax, np
        self.bind_jit, self.eval_jaxpr, self.tracer = pjit.jit_p.bind, core.eval_jaxpr, core.Tracer

    def follows(self, events: list[tuple[Any, ...]], placed: Any,
                returned: list[tuple[str, Any]]) -> dict[str, bool] | None:
        return follows(events, placed, returned, self)


def follows(events: list[tuple[Any, ...]], placed: Any, returned: list[tuple[str, Any]],
            ops: Replayer) -> dict[str, bool] | None:
    """For each returned leaf, whether it changes when ``placed`` holds other values (two affine
    maps of its own, so one that a function's answer ignores does not decide alone), or None
    when the replay cannot say."""
    kinds = [event[0] for event in events]
    if "to_host" in kinds and "from_host" in kinds[kinds.index("to_host"):]:
        return None  # a value pulled to NumPy and given back: a link the recorder cannot follow
    np = ops.np
    changed = {path: False for path, _ in returned}
    for other in _other_values(placed, ops.jax, np):
        replaced = _replay(events, placed, other, ops)
        if replaced is None:
            return None
        for path, leaf in returned:
            new = replaced.get(id(leaf))
            if new is not None and not _same(new, leaf, np):
                changed[path] = True
    return changed


def _replay(events: list[tuple[Any, ...]], placed: Any, other: Any, ops: Replayer) -> dict[int, Any] | None:
    """id(value the call made) -> the value its operation makes from ``other`` in place of
    ``placed``; None when an operation reached by a replaced value cannot be run again."""
    replaced: dict[int, Any] = {id(placed): other}
    jax, tracer = ops.jax, ops.tracer
    try:
        for event in events:
            kind = event[0]
            if kind == "device_put":
                _, xs, devices, outs = event
                for x, target, out in zip(xs, devices, outs):
                    if id(x) in replaced:
                        replaced[id(out)] = jax.device_put(replaced[id(x)], target)
                continue
            if kind == "jit":
                params, args, outs = event[1], event[2], event[3]
            elif kind == "primitive":
                primitive, params, args, out = event[1:5]
                outs = list(out) if primitive.multiple_results else [out]
            elif kind == "shard_map":
                staged, args, outs = event[2], event[3], event[4]
            else:
                continue
            if not any(id(a) in replaced for a in args):
                continue
            if any(isinstance(v, tracer) for v in (*args, *outs)):
                return None  # a tracer: part of a transformation the recorder sees only from outside
            new_args = [replaced.get(id(a), a) for a in args]
            if kind == "jit":
                if any(params.get("donated_invars") or ()):  # the call's own arrays are not the replay's to give up
                    params = {**params, "donated_invars": (False,) * len(params["donated_invars"])}
                made = ops.bind_jit(*new_args, **params)
            elif kind == "primitive":
                made = primitive.bind(*new_args, **params)
                made = list(made) if primitive.multiple_results else [made]
            else:
                if not hasattr(staged, "jaxpr"):
                    return None  # its body could not be staged: nothing to run again
                made = ops.eval_jaxpr(staged.jaxpr, staged.consts, *new_args)
            for out, new in zip(outs, made):
                replaced[id(out)] = new
    except Exception:  # a donated operand gone, a shape the program refuses: no answer
        return None
    return replaced


def _other_values(placed: Any, jax: Any, np: Any) -> list[Any]:
    """``placed`` with other values in every element, on its own sharding."""
    value = np.asarray(placed)
    if value.size == 0:
        return []
    if value.dtype.kind == "b":
        others = [~value]
    elif value.dtype.kind in "iu":
        others = [value + 1, value * 2 + 3]
    elif value.dtype.kind in "fc":
        wide = value.astype(np.complex128 if value.dtype.kind == "c" else np.float64)
        others = [1.25 - 0.5 * wide, 2.0 * wide + 3.0]
    else:
        return []
    return [jax.device_put(o.astype(value.dtype), placed.sharding) for o in others]


def _same(new: Any, old: Any, np: Any) -> bool:
    try:
        return bool(np.array_equal(np.asarray(new), np.asarray(old), equal_nan=True))
    except (TypeError, ValueError):
        return False
