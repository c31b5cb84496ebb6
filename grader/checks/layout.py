"""``structure``: where the returned array really lives.

The traced program says how a function *asked* for its data to be laid out; the array it
returns says where the data *is*. These checks read the returned array's sharding and its
addressable shards (which device holds which block) on the probe input and compare them
with a declared ``NamedShardingTarget``, the same declaration the placement checks use.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, ClassVar

import numpy as np

from grader.checks.base import Check, Context
from grader.checks.returns import probe_call
from grader.checks.structure import NamedShardingTarget, sharding_text, spec_key, spec_text
from grader.outcome import Category, Outcome

Blocks = tuple[tuple[int, int], ...]  # [start, stop) per dimension


def _trimmed(spec: tuple[Any, ...]) -> tuple[Any, ...]:
    """Trailing Nones say nothing: PartitionSpec('data') and PartitionSpec('data', None) lay a
    matrix out the same way, and JAX reports whichever the code wrote."""
    spec = tuple(spec)
    while spec and spec[-1] is None:
        spec = spec[:-1]
    return spec


def expected_blocks(target: NamedShardingTarget, available: int, shape: tuple[int, ...]) -> dict[int, Blocks]:
    """Which block of an array of ``shape`` each device of the target's mesh holds."""
    ids = target.device_ids(available)
    mesh_shape = target.mesh_shape or (len(ids),)
    grid = np.array(ids).reshape(mesh_shape)
    sizes = dict(zip(target.axis_names, mesh_shape))
    spec = tuple(target.spec) + (None,) * (len(shape) - len(target.spec))
    layout: dict[int, Blocks] = {}
    for coords in np.ndindex(*mesh_shape):
        where = dict(zip(target.axis_names, coords))
        blocks = []
        for n, entry in zip(shape, spec):
            names = () if entry is None else ((entry,) if isinstance(entry, str) else tuple(entry))
            count = prod(sizes[a] for a in names)
            index = int(np.ravel_multi_index([where[a] for a in names], [sizes[a] for a in names])) if names else 0
            size = n // count if count else n
            blocks.append((index * size, (index + 1) * size))
        layout[int(grid[coords])] = tuple(blocks)
    return layout


def _returned(context: Context) -> tuple[dict[str, Any] | None, str | None]:
    returned = probe_call(context)
    value = returned.value or {}
    if not returned.ok or value.get("kind") != "jax_array":
        return None, f"your function {returned.describe()}, not a JAX array"
    return value, None


@dataclass(frozen=True, kw_only=True)
class ResultSharding(Check):
    """The returned array is a NamedSharding over the target's mesh (devices, shape, axis
    names) with the target's spec (trailing Nones aside, or one ``also_accept`` names)."""
    target: NamedShardingTarget
    category: ClassVar[Category] = "structure"

    def judge(self, context: Context) -> Outcome:
        value, why = _returned(context)
        want = f"NamedSharding({self.target.mesh_text()}, {spec_text(self.target.spec)})"
        if value is None:
            return Outcome.failed(f"The result's sharding could not be read: {why}.", expected=want, observed=why)
        sharding = value.get("sharding") or {}
        names = list(context.session.environment.get("devices", []))
        seen = sharding_text(sharding, names)
        problems = []
        if sharding.get("type") != "NamedSharding":
            problems.append(f"it lives on {seen}, not on a NamedSharding over a mesh")
        else:
            ids = self.target.device_ids(len(names))
            if sorted(sharding.get("mesh_devices") or []) != sorted(ids):
                problems.append(f"its mesh holds devices {sharding.get('mesh_devices')}, not {ids}")
            if self.target.mesh_shape is not None and tuple(sharding.get("mesh_shape", [])) != self.target.mesh_shape:
                problems.append(f"its mesh has shape {tuple(sharding.get('mesh_shape', []))}, "
                                f"not {self.target.mesh_shape}")
            if tuple(sharding.get("axis_names", [])) != self.target.axis_names:
                problems.append(f"its mesh axes are {tuple(sharding.get('axis_names', []))}, "
                                f"not {self.target.axis_names}")
            got = spec_key(sharding.get("spec", []))
            accepted = {_trimmed(self.target.spec), *(_trimmed(s) for s in self.target.also_accept)}
            if _trimmed(got) not in accepted:
                problems.append(f"its spec is {spec_text(got)}, not {spec_text(self.target.spec)}")
        if problems:
            return Outcome.failed(f"The array you return is laid out differently from what the task asks: "
                                  f"{'; '.join(problems)}.", expected=want, observed=seen)
        return Outcome.passed(f"The array you return lives on {seen}.")


@dataclass(frozen=True, kw_only=True)
class ShardLayout(Check):
    """Every device of the target's mesh holds exactly the block of the returned array the
    target's mesh (in device order) and spec assign it, and no other device holds any."""
    target: NamedShardingTarget
    category: ClassVar[Category] = "structure"

    def judge(self, context: Context) -> Outcome:
        value, why = _returned(context)
        if value is None:
            return Outcome.failed(f"Where the result lives could not be read: {why}.", observed=why)
        shape = tuple(value.get("shape", ()))
        names = list(context.session.environment.get("devices", []))
        want = expected_blocks(self.target, len(names), shape)
        got = {int(s["device"]): tuple(tuple(b) for b in s["index"]) for s in value.get("shards", [])}
        wrong = [d for d in sorted(set(want) | set(got)) if want.get(d) != got.get(d)]
        if not wrong:
            held = ", ".join(f"{_device(d, names)}: {_blocks(want[d])}" for d in list(want)[:4])
            more = " …" if len(want) > 4 else ""
            return Outcome.passed(f"Each shard lives where the task puts it ({held}{more}).")
        lines = [f"{_device(d, names)} holds {_blocks(got[d]) if d in got else 'nothing'}, "
                 f"should hold {_blocks(want[d]) if d in want else 'nothing'}" for d in wrong[:3]]
        more = f" ({len(wrong) - 3} more devices differ.)" if len(wrong) > 3 else ""
        return Outcome.failed(f"For x of shape {tuple(context.probe.shape)}, the returned array's shards are not "
                              f"where the task puts them: {'; '.join(lines)}.{more}",
                              expected=f"the layout of {self.target.text()}",
                              observed="; ".join(lines))


def _device(device: int, names: list[str]) -> str:
    return names[device] if device < len(names) else f"device #{device}"


def _blocks(blocks: Blocks) -> str:
    return "x[" + ", ".join(f"{a}:{b}" for a, b in blocks) + "]" if blocks else "the whole (scalar) value"
