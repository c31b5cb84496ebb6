"""``type``: what kind of value the function gives back, against the declared return structure."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from grader.arguments import Array, Key, Scalar, Signature, argument_leaves, flatten_spec, resolve_shape
from grader.checks.base import Check, Context
from grader.observe.returned import Leaf, Returned, describe_structure
from grader.outcome import Category, Outcome


def probe_call(context: Context) -> Returned:
    """The function's answer on the exercise's probe arguments, shared by several checks. The
    whole program this call runs is recorded too, and its account checked by the witness:
    structure is judged on it."""
    return context.memo("probe_call", lambda: context.session.settled(probe_reply(context)), seed_free=True)


def probe_reply(context: Context) -> Returned:
    """The probe call as the child described it: its values, while the witness checks its
    account beside the value checks' calls (a check judging structure asks ``probe_call``)."""
    return context.memo("probe_reply", lambda: context.session.call(context.probe, record="full", settle=False),
                        seed_free=True)


def wanted_leaves(signature: Signature, probe: dict[str, Any]) -> dict[str, Any]:
    """The declared return structure for the probe's dimensions, by leaf path."""
    dims = signature.dims_of(probe)
    found: dict[str, Any] = {}
    for path, spec in flatten_spec(signature.returns, "result"):
        found[path] = (spec.dtype, resolve_shape(spec, dims)) if isinstance(spec, Array) else spec
    return found


def _wanted_text(want: Any) -> str:
    if isinstance(want, tuple):
        dtype, shape = want
        return f"a JAX array of shape {shape} and dtype {dtype}"
    if isinstance(want, Scalar):
        return f"a Python {want.kind}"
    return "a JAX PRNG key"


def _leaf_problem(leaf: Leaf, want: Any, shape_advice: str) -> str | None:
    if isinstance(want, Scalar):
        ok = leaf.kind == "python" and leaf.type.split(".")[-1] == want.kind
        return None if ok else f"Return a Python {want.kind}."
    if isinstance(want, Key):
        return None if leaf.kind == "jax_array" and "key" in (leaf.dtype or "") else "Return a JAX PRNG key."
    dtype, shape = want
    if leaf.kind == "jax_array" and leaf.shape == shape and leaf.dtype == dtype:
        return None
    if leaf.kind == "python":
        return "Return the JAX array itself: do not convert it with float() or .item()."
    if leaf.kind == "numpy":
        return "Return the JAX array itself: do not convert it to NumPy."
    if leaf.kind == "other":
        return "Return the result of a jax.numpy operation."
    if leaf.shape != shape:
        return shape_advice
    return f"Make the result {dtype}, e.g. with .astype(jnp.{dtype}) or jnp.sum(..., dtype=jnp.{dtype})."


@dataclass(frozen=True, kw_only=True)
class Returns(Check):
    """The probe call returns the exercise's declared return structure (``Signature.returns``):
    real ``jax.Array`` leaves (not lookalikes) of the declared shapes and dtypes, in the
    declared tuple or dict. ``advice`` is said when a shape is wrong."""
    advice: str | None = None
    category: ClassVar[Category] = "type"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        """A probe giving two axes of a returned array one size cannot tell a transposed or
        reshaped result from the right one: shapes are judged on the probe alone."""
        try:
            dims = signature.dims_of(probe)
        except ValueError:
            return []  # the exercise's own lint says the probe does not fit the signature
        found = []
        for path, spec in flatten_spec(signature.returns, "result"):
            if not isinstance(spec, Array):
                continue
            sizes = dict(zip(spec.shape, resolve_shape(spec, dims)))
            alike = [(a, b) for i, a in enumerate(sizes) for b in list(sizes)[i + 1:] if sizes[a] == sizes[b]]
            if alike:
                a, b = alike[0]
                found.append(f"{self.id}: PROBE gives {path}'s axes {a!r} and {b!r} the same size ({sizes[a]}), so "
                             f"a transposed {path} has the declared shape: give them different sizes")
        return found

    def judge(self, context: Context) -> Outcome:
        returned = probe_reply(context)  # its values alone: the witness goes on checking it
        wanted = wanted_leaves(context.signature, context.probe)
        wanted_text = ("; ".join(f"{p}: {_wanted_text(w)}" for p, w in wanted.items()) if list(wanted) != ["result"]
                       else _wanted_text(wanted["result"]))
        if not returned.ok:
            return Outcome.failed(f"Your function {returned.describe()}.", hint_applies=False,
                                  expected=wanted_text, observed=returned.describe())
        got = {leaf.path: leaf for leaf in returned.leaves}
        observed = describe_structure(returned.leaves)
        if set(got) != set(wanted):
            missing, extra = sorted(set(wanted) - set(got)), sorted(set(got) - set(wanted))
            parts = [f"missing {', '.join(missing)}" if missing else "", f"not asked for: {', '.join(extra)}" if extra
                     else ""]
            return Outcome.failed(f"Your function returned {observed}; the task asks for {wanted_text} "
                                  f"({'; '.join(p for p in parts if p)}).", expected=wanted_text, observed=observed)
        probe_shapes = ", ".join(f"{path} of shape {value.shape}" for path, value in argument_leaves(context.probe)
                                 if hasattr(value, "shape"))
        for path, want in wanted.items():
            shape_advice = self.advice or (f"Return an array of shape {want[1]} for the probe input ({probe_shapes})."
                                           if isinstance(want, tuple) else "")
            advice = _leaf_problem(got[path], want, shape_advice)
            if advice is not None:
                what = "" if path == "result" else f" at {path}"
                return Outcome.failed(f"Your function returned {got[path].describe()}{what}; the task asks for "
                                      f"{_wanted_text(want)}. {advice}".strip(),
                                      expected=wanted_text, observed=observed)
        return Outcome.passed(f"Returned {wanted_text}.")
