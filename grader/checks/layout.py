"""``structure``: where the returned array really lives.

The placement checks say how a function *asked* for its data to be laid out; the array it
returns says where the data *is*. These checks read a returned leaf's sharding and its
addressable shards (which device holds which block) on the probe call and compare them with a
declared ``NamedShardingTarget``, the same declaration the placement checks use. The real
buffers behind the reported sharding are cross-checked first (``structure.evidence``), so a
rewritten mesh cannot pass for the right one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from grader.array_layout import ArrayLayout
from grader.arguments import Signature
from grader.checks.base import Check, Context
from grader.checks.returns import probe_call
from grader.checks.evidence import evidence
from grader.checks.shardings import Blocks, blocks_of, sharding_text, spec_key, spec_text, trimmed
from grader.checks.structure import NamedShardingTarget
from grader.observe.layouts import layout_of
from grader.outcome import Category, Outcome


def expected_blocks(target: NamedShardingTarget, available: int, shape: tuple[int, ...]) -> dict[int, Blocks]:
    """Which block of an array of ``shape`` each device of the target's mesh holds."""
    layout = blocks_of(target.as_sharding(available), shape)
    assert layout is not None, target
    return layout


def _returned(context: Context, path: str) -> tuple[dict[str, Any] | None, str | None]:
    returned = probe_call(context)
    leaf = returned.leaf(path) if returned.ok else None
    if leaf is None or leaf.kind != "jax_array":
        what = f"{leaf.describe()} at {path}" if leaf else returned.describe().removeprefix("returned ")
        return None, f"your function {'returned ' if returned.ok else ''}{what}, not a JAX array"
    problem = evidence(context).problem
    if problem:
        return None, problem[:1].lower() + problem[1:]
    return {"sharding": leaf.sharding or {}, "shards": leaf.shards, "shape": leaf.shape or ()}, None


def _held(value: dict[str, Any]) -> dict[int, Blocks]:
    """Which block of the returned array each device holds, as its shards say."""
    return {int(s["device"]): tuple(tuple(b) for b in s["index"]) for s in value["shards"]}


def _layouts(target: NamedShardingTarget, value: dict[str, Any], names: list[str]) -> dict[str, ArrayLayout | None]:
    """The task's layout of the returned array and where its shards are (the buffers JAX holds,
    cross-checked against its sharding and confirmed by the witness), as a failed outcome's data."""
    shape = tuple(value["shape"])
    return {"expected_layout": layout_of(target.as_sharding(len(names)), shape, names),
            "observed_layout": layout_of(value["sharding"], shape, names, held=_held(value))}


def _result_problems(result: str, signature: Signature) -> list[str]:
    from grader.arguments import flatten_spec
    paths = [p for p, _ in flatten_spec(signature.returns, "result")]
    return [] if result in paths else [f"result={result!r} is not a leaf of the declared return ({', '.join(paths)})"]


@dataclass(frozen=True, kw_only=True)
class ResultSharding(Check):
    """The returned leaf at ``result`` is a NamedSharding over the target's mesh (devices,
    shape, axis names) with the target's spec (trailing Nones aside, or one ``also_accept`` names)."""
    target: NamedShardingTarget
    result: str = "result"
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        return [f"{self.id}: {p}" for p in _result_problems(self.result, signature)]

    def judge(self, context: Context) -> Outcome:
        value, why = _returned(context, self.result)
        want = f"NamedSharding({self.target.mesh_text()}, {spec_text(self.target.spec)})"
        what = "The array you return" if self.result == "result" else f"The array you return at {self.result}"
        if value is None:
            return Outcome.failed(f"{what}: its sharding could not be read: {why}.", expected=want, observed=why)
        sharding = value["sharding"]
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
            accepted = {trimmed(self.target.spec), *(trimmed(s) for s in self.target.also_accept)}
            if trimmed(got) not in accepted:
                problems.append(f"its spec is {spec_text(got)}, not {spec_text(self.target.spec)}")
        if problems:
            return Outcome.failed(f"{what} is laid out differently from what the task asks: "
                                  f"{'; '.join(problems)}.", expected=want, observed=seen,
                                  **_layouts(self.target, value, names))
        return Outcome.passed(f"{what} lives on {seen}.")


@dataclass(frozen=True, kw_only=True)
class ShardLayout(Check):
    """Every device of the target's mesh holds exactly the block of the returned leaf at
    ``result`` that the target's mesh (in device order) and spec assign it, and no other
    device holds any."""
    target: NamedShardingTarget
    result: str = "result"
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        return [f"{self.id}: {p}" for p in _result_problems(self.result, signature)]

    def judge(self, context: Context) -> Outcome:
        value, why = _returned(context, self.result)
        if value is None:
            return Outcome.failed(f"Where the result lives could not be read: {why}.", observed=why)
        shape = tuple(value["shape"])
        names = list(context.session.environment.get("devices", []))
        want = expected_blocks(self.target, len(names), shape)
        got = _held(value)
        wrong = [d for d in sorted(set(want) | set(got)) if want.get(d) != got.get(d)]
        if not wrong:
            held = ", ".join(f"{_device(d, names)}: {_blocks(want[d])}" for d in list(want)[:4])
            more = " …" if len(want) > 4 else ""
            return Outcome.passed(f"Each shard lives where the task puts it ({held}{more}).")
        lines = [f"{_device(d, names)} holds {_blocks(got[d]) if d in got else 'nothing'}, "
                 f"should hold {_blocks(want[d]) if d in want else 'nothing'}" for d in wrong[:3]]
        more = f" ({len(wrong) - 3} more devices differ.)" if len(wrong) > 3 else ""
        return Outcome.failed(f"For the probe input, the returned array's shards are not where the task puts them: "
                              f"{'; '.join(lines)}.{more}", expected=f"the layout of {self.target.text()}",
                              observed="; ".join(lines), **_layouts(self.target, value, names))


def _device(device: int, names: list[str]) -> str:
    return names[device] if 0 <= device < len(names) else f"device #{device}"


def _blocks(blocks: Blocks) -> str:
    return "[" + ", ".join(f"{a}:{b}" for a, b in blocks) + "]" if blocks else "the whole (scalar) value"
