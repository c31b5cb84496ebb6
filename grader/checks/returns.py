"""``type``: what kind of value the function gives back."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

from grader.checks.base import Check, Context
from grader.outcome import Category, Outcome
from grader.observe.session import Returned, describe_value


def probe_call(context: Context) -> Returned:
    """The function's answer on the exercise's probe input, shared by several checks."""
    return context.memo("probe_call", lambda: context.session.call(context.probe))


@dataclass(frozen=True, kw_only=True)
class ReturnsArray(Check):
    """The return value is a real ``jax.Array`` (not a lookalike) of the given shape and dtype.
    ``shape`` is a fixed shape, ``"input"`` (shaped like the probe input), or a function of
    the probe input's shape (``lambda s: s[:1]`` for one number per row)."""
    shape: tuple[int, ...] | str | Callable[[tuple[int, ...]], tuple[int, ...]] = ()
    dtype: str = "float32"
    category: ClassVar[Category] = "type"

    def wanted_shape(self, context: Context) -> tuple[int, ...]:
        given = tuple(context.probe.shape)
        if self.shape == "input":
            return given
        if callable(self.shape):
            return tuple(self.shape(given))
        return tuple(self.shape)

    def judge(self, context: Context) -> Outcome:
        returned = probe_call(context)
        shape = self.wanted_shape(context)
        wanted = f"a JAX array of shape {shape} and dtype {self.dtype}"
        if not returned.ok:
            return Outcome.failed(f"Your function {returned.describe()}.", hint_applies=False,
                                  expected=wanted, observed=returned.describe())
        value = returned.value or {}
        observed = describe_value(value)
        if value.get("kind") == "jax_array" and tuple(value.get("shape", ())) == shape \
                and value.get("dtype") == self.dtype:
            return Outcome.passed(f"Returned {wanted}.")
        advice = {
            "python": "Return the JAX array itself: do not convert it with float() or .item().",
            "numpy": "Return the JAX array itself: do not convert it to NumPy.",
            "other": "Return the result of a jax.numpy operation.",
        }.get(value.get("kind", ""), "")
        if value.get("kind") == "jax_array":
            if tuple(value.get("shape", ())) != shape:
                advice = (f"Reduce to shape {shape}: a sum over the whole array, without keepdims or reshaping."
                          if shape == () else f"Return an array of shape {shape} for the probe input x of shape "
                                              f"{tuple(context.probe.shape)}.")
            else:
                advice = f"Make the result {self.dtype}, e.g. jnp.sum(..., dtype=jnp.{self.dtype})."
        return Outcome.failed(f"Your function returned {observed}; the task asks for {wanted}. {advice}".strip(),
                              expected=wanted, observed=observed)
