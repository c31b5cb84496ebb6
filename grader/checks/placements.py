"""The standard placement checks of a target, worded from it.

Most sharding exercises judge a target with the same four checks: the value is placed on a
NamedSharding, on the asked-for mesh, with the asked-for spec, and the result is computed from
it. ``placement_checks`` builds them with ids, titles and hints derived from the target (its
operand, mesh and spec); an exercise overrides any of them with a :class:`Wording` where it has
its own words, and drops a check it does not want with ``None``."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from math import prod
from typing import TypeVar

from grader.checks.base import Check
from grader.checks.evidence import VIA_NAME
from grader.checks.shardings import capital, spec_text
from grader.checks.from_placement import ResultFromPlacement
from grader.checks.structure import MeshMatches, NamedShardingTarget, PlacedOnNamedSharding, SpecMatches


class _Derived(Enum):
    DERIVED = "derived"


_DERIVED = _Derived.DERIVED  # a Wording field not given: derived from the target
T = TypeVar("T")


@dataclass(frozen=True)
class Wording:
    """What an exercise says itself about one of the standard checks; a field not given is
    derived from the target, and ``hint=None`` gives the check no hint."""
    id: str | _Derived = _DERIVED
    title: str | _Derived = _DERIVED
    hint: str | None | _Derived = _DERIVED


# Whose mesh a title talks about, by how the sharding is given.
MESH_OWNER = {"device_put": "The mesh", "jit_in": "The in_shardings mesh", "jit_out": "The out_shardings mesh",
              "constraint": "The constraint's mesh", "shard_map_in": "The shard_map mesh",
              "shard_map_out": "The shard_map mesh"}


def placement_checks(target: NamedShardingTarget, name: str = "", *, placed: Wording | None = Wording(),
                     mesh: Wording | None = Wording(), spec: Wording | None = Wording(),
                     from_placement: Wording | None = Wording(), mesh_note: str | None = None) -> list[Check]:
    """``PlacedOnNamedSharding``, ``MeshMatches``, ``SpecMatches`` and ``ResultFromPlacement`` on
    ``target``, in this order, each worded by its ``Wording`` (``None`` leaves the check out).
    ``name`` tells one target's checks from another's: ids ``structure.x_placed`` rather than
    ``structure.placed``, titles "x's mesh ..." rather than "The mesh ...". The mesh's hint is
    the mesh as code, followed by ``mesh_note`` when given ("...: every device, one axis")."""
    prefix = f"structure.{name}_" if name else "structure."
    label = target.label or target.operand
    subject = label if label == target.operand else capital(label)  # x as the student wrote it; prose capitalised
    mesh_hint = f"{target.mesh_text()}: {mesh_note}." if mesh_note else f"{target.mesh_text()}."
    standard = (
        (PlacedOnNamedSharding, placed, f"{prefix}placed", _placed_title(target, label, subject),
         _placed_hint(target, label)),
        (MeshMatches, mesh, f"{prefix}mesh", _mesh_title(target, subject if name else ""), mesh_hint),
        (SpecMatches, spec, f"{prefix}spec", _spec_title(target, subject if name else ""), _spec_hint(target, label)),
        (ResultFromPlacement, from_placement, f"{prefix}from_placed", f"The result is computed from the placed {label}",
         _from_placement_hint(target, label)),
    )
    return [kind(id=_given(wording.id, id_), title=_given(wording.title, title), hint=_given(wording.hint, hint),
                 target=target)
            for kind, wording, id_, title, hint in standard if wording is not None]


def _given(said: T | _Derived, derived: T) -> T:
    return derived if said is _DERIVED else said


def _placed_title(target: NamedShardingTarget, label: str, subject: str) -> str:
    if target.via == "device_put":
        itself = " itself" if target.match == "exact" else ""
        return f"Places {label}{itself} with jax.device_put on a NamedSharding"
    return {"jit_in": f"{subject} enters a jax.jit through in_shardings",
            "jit_out": f"{subject} leaves the jax.jit through out_shardings",
            "constraint": f"with_sharding_constraint constrains {label}"
                          + (f" inside jax.{target.inside}" if target.inside else ""),
            "shard_map_in": f"{subject} is split over a mesh by jax.shard_map",
            "shard_map_out": f"{subject} leaves jax.shard_map through out_specs"}[target.via]


def _placed_hint(target: NamedShardingTarget, label: str) -> str:
    if target.via == "device_put":
        return f"Place {label} first, then compute on the placed array: {target.text()}."
    return f"Use {target.text()}."


def _mesh_title(target: NamedShardingTarget, subject: str) -> str:
    """"The mesh is all of jax.devices() with axis 'data'", "x's mesh is jax.devices()[:4] as a
    2 x 2 grid with axes ('data', 'model')"."""
    grid = target.mesh_shape if target.mesh_shape is not None and len(target.mesh_shape) > 1 else None
    if target.devices == (None, None):
        devices = f"all {prod(grid)} devices" if grid else "all of jax.devices()"
    else:
        devices = target.devices_text()
    if grid:
        devices += f" as a {' x '.join(map(str, grid))} grid"
    axes = f"axis {target.axis_names[0]!r}" if len(target.axis_names) == 1 else f"axes {target.axis_names!r}"
    owner = f"{subject}'s mesh" if subject and target.via == "device_put" else MESH_OWNER[target.via]
    return f"{owner} is {devices} with {axes}"


def _spec_title(target: NamedShardingTarget, subject: str) -> str:
    """"The spec is PartitionSpec() (replicated)", "w is replicated: PartitionSpec()"."""
    spec = spec_text(target.spec)
    replicated = not any(target.spec)
    if subject:
        return f"{subject} is replicated: {spec}" if replicated else f"{subject}'s spec is {spec}"
    return f"The spec is {spec} (replicated)" if replicated else f"The spec is {spec}"


def _spec_hint(target: NamedShardingTarget, label: str) -> str:
    spec = spec_text(target.spec)
    if not any(target.spec):
        return f"{spec} splits nothing: every device of the mesh holds all of {label}."
    parts = [f"keeps dimension {i} whole" if entry is None else f"splits dimension {i} over {entry!r}"
             for i, entry in enumerate(target.spec)]
    return (f"The spec's entries are {label}'s dimensions in order: {spec} "
            f"{', '.join(parts[:-1]) + ' and ' if len(parts) > 1 else ''}{parts[-1]}.")


def _from_placement_hint(target: NamedShardingTarget, label: str) -> str:
    if target.via == "device_put":
        return (f"Compute the result from the array jax.device_put returned, not from the original "
                f"{label}; place before computing, not after.")
    return f"Compute the result from {label} as {VIA_NAME[target.via]} gives it, not from the original."
