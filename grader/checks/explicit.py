"""``structure``: explicit sharding, where the layout is part of an array's type.

A mesh made with ``jax.make_mesh(shape, names, axis_types=(AxisType.Explicit,))`` makes the
sharding of every array placed on it part of that array's type: ``jax.typeof(x)`` reads
``float32[16@data,8]``, operations propagate it, and ``jax.sharding.reshard`` changes it. On a
mesh whose axes are ``Auto`` the compiler chooses, and ``jax.typeof(x).sharding`` states no
split at all, even where the buffers are split. Two questions follow, which no other check
asks:

- ``MeshAxisTypes``: the mesh the target's value is placed on has the asked-for axis types
  (a placement check, like ``MeshMatches``, on the same ``NamedShardingTarget``);
- ``TypedSharding``: the returned leaf's type states the asked-for spec (and axis types).

The child records both as plain data (``grader.child.typed``): a mesh's ``axis_types`` in every
sharding it describes, and a returned array's ``typed_sharding``. A JAX without axis types or
``jax.typeof`` records neither, and these checks then fail saying so (an exercise about
explicit sharding needs a JAX that has it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from grader.arguments import Signature
from grader.checks.base import Check, Context
from grader.checks.evidence import Evidence, Placement, evidence
from grader.checks.returns import probe_call
from grader.checks.shardings import Spec, spec_key, spec_text, trimmed
from grader.checks.structure import PlacedOnNamedSharding, named
from grader.outcome import Category, Outcome


def type_names(kinds: Any) -> tuple[str, ...]:
    """Axis types by name: ``AxisType.Explicit`` and ``"Explicit"`` alike read ``"Explicit"``."""
    return tuple(str(getattr(kind, "name", kind)) for kind in kinds)


def _types_text(kinds: tuple[str, ...]) -> str:
    return f"({', '.join(f'AxisType.{k}' for k in kinds)}{',' if len(kinds) == 1 else ''})"


@dataclass(frozen=True, kw_only=True)
class MeshAxisTypes(PlacedOnNamedSharding):
    """The mesh the target's value is placed on has ``axis_types`` (``AxisType.Explicit`` or
    its name, one per axis), as ``jax.make_mesh(..., axis_types=...)`` or ``Mesh(...,
    axis_types=...)`` gave them."""
    axis_types: tuple[Any, ...]
    draws_layouts: ClassVar[bool] = False  # axis types: the blocks are alike either way

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        if chosen.sharding.get("type") != "NamedSharding":
            return super().judge_placement(chosen, found, leaf)
        want = type_names(self.axis_types)
        label = named(leaf, self.target)
        got = chosen.sharding.get("axis_types")
        expected = f"a mesh with axis_types={_types_text(want)}"
        if got is None:
            return Outcome.failed(f"The mesh {label} is placed on states no axis types (this JAX records none), "
                                  f"so explicit sharding cannot be judged.", expected=expected,
                                  observed="no axis types recorded")
        got_names = tuple(str(k) for k in got)
        if got_names != want:
            return Outcome.failed(f"The mesh {label} is placed on has axis types {_types_text(got_names)}; the "
                                  f"task asks for {_types_text(want)}.", expected=expected,
                                  observed=f"a mesh with axis_types={_types_text(got_names)}")
        return Outcome.passed(f"The mesh {label} is placed on has axis types {_types_text(got_names)}.")


@dataclass(frozen=True, kw_only=True)
class TypedSharding(Check):
    """The returned leaf ``leaf`` is a JAX array whose type (``jax.typeof(x).sharding``) states
    ``spec`` (trailing Nones aside) over a mesh with axes ``axis_names`` and, when given,
    ``axis_types``. On an ``Auto`` mesh the type states no split, whatever the buffers hold."""
    spec: Spec
    axis_names: tuple[str, ...]
    axis_types: tuple[Any, ...] | None = None
    leaf: str = "result"
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        from grader.arguments import flatten_spec
        paths = [p for p, _ in flatten_spec(signature.returns, "result")]
        return [] if self.leaf in paths else [f"{self.id}: leaf={self.leaf!r} is not a leaf of the declared return "
                                              f"({', '.join(paths)})"]

    def _wanted(self) -> str:
        types = f" with axis_types={_types_text(type_names(self.axis_types))}" if self.axis_types else ""
        return f"jax.typeof({self._name()}).sharding stating {spec_text(self.spec)} over axes {self.axis_names!r}{types}"

    def _name(self) -> str:
        return "result" if self.leaf == "result" else self.leaf

    def judge(self, context: Context) -> Outcome:
        returned = probe_call(context)
        want = self._wanted()
        found = returned.leaf(self.leaf) if returned.ok else None
        if found is None or found.kind != "jax_array":
            observed = (returned.describe() if not returned.ok else
                        f"{found.describe()} at {self.leaf}" if found is not None else f"{self.leaf} is missing")
            return Outcome.failed(f"Nothing to judge here: {'your function ' if not returned.ok else ''}{observed}.",
                                  expected=want, observed=observed)
        problem = evidence(context).problem
        if problem:
            return Outcome.failed(problem + ".", expected=want, observed=problem)
        typed = found.typed_sharding
        if typed is None or typed.get("type") != "NamedSharding":
            observed = "no sharding in its type" if typed is None else f"a {typed.get('type')} in its type"
            return Outcome.failed(f"The type of the array you return states {observed} (jax.typeof), so the layout "
                                  "is not part of its type: place it on a mesh whose axes are AxisType.Explicit.",
                                  expected=want, observed=observed)
        spec = trimmed(spec_key(typed.get("spec") or ()))
        axes = tuple(typed.get("axis_names") or ())
        kinds = tuple(str(k) for k in typed.get("axis_types") or ())
        observed = (f"jax.typeof({self._name()}).sharding states {spec_text(spec)} over axes {axes!r}"
                    + (f" with axis_types={_types_text(kinds)}" if kinds else ""))
        wrong = []
        if axes != tuple(self.axis_names):
            wrong.append(f"its mesh's axes are {axes!r}, not {self.axis_names!r}")
        if self.axis_types is not None and kinds != type_names(self.axis_types):
            wrong.append(f"its mesh's axis types are {_types_text(kinds) if kinds else 'not stated'}, not "
                         f"{_types_text(type_names(self.axis_types))}")
        if spec != trimmed(tuple(self.spec)):
            auto = " (on an Auto mesh the type states no split, whatever the buffers hold)" \
                if not any(spec) and "Auto" in kinds else ""
            wrong.append(f"its spec is {spec_text(spec)}, not {spec_text(tuple(self.spec))}{auto}")
        if wrong:
            return Outcome.failed(f"The array you return has a type whose sharding is not the task's: "
                                  f"{'; '.join(wrong)}.", expected=want, observed=observed)
        return Outcome.passed(f"The array you return has the sharding in its type: {observed}.")
