"""Where a reproduced call's values went, as the witness confirms it.

The structure checks read placements (``jax.device_put`` of which argument onto which
sharding) and the shardings of the returned arrays from the child's record, which a
submission controlling its process can edit apart from the account it hands over. The witness
reports where each of its own ``place`` steps put its value and where each output it computed
lives, described with the child's own function (``grader.child.sharding_data``). Here every
eager placement the child recorded must be one the witness made (the same argument leaf onto
the same sharding), and every returned array must be laid out as the witness's output is;
the first that is not is named, and the call's verdict becomes ``diverged``.

Descriptions are compared on what the checks read: a ``NamedSharding``'s mesh devices, shape,
axis names and spec (trailing unsharded dimensions aside), its memory kind (none named is
the device's default), its axis types where both say; other shardings by their devices. A returned array by its layout
(``_laid_out_alike``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from grader.observe.layouts import Blocks, blocks_of
from grader.observe.program import Program
from grader.observe.returned import Leaf


@dataclass(frozen=True)
class Where:
    """Where an array the witness made lives: its described sharding and each device's block."""
    sharding: dict[str, Any]
    blocks: dict[int, Blocks]


@dataclass(frozen=True)
class Placed:
    """A ``place`` step the witness ran (its index in the account) and where its value went."""
    step: int
    where: Where


def unconfirmed(program: Program | None, placements: Sequence[dict[str, Any]], leaves: Sequence[Leaf],
                account: dict[str, Any], paths: Sequence[str], placed: Sequence[Placed],
                outputs: Sequence[Where | None], default_kind: str | None) -> str | None:
    """The first placement or returned layout in the child's record (``program``: the call as
    one program; ``placements``: its cheap record; ``leaves``) that the witness's run of
    ``account`` did not make, in words; None when every one is confirmed. ``paths``: the
    argument leaves' paths, in the account's order."""
    made = _made(account, paths, placed)
    claims = [(p.get("operand"), p["sharding"]) for p in placements if p.get("via", "device_put") == "device_put"]
    claims.extend(_program_puts(program))
    for operand, sharding in claims:
        if sharding.get("type") in ("default", None):
            continue  # no sharding named: nothing claimed
        same_operand = [where for source, where in made if source == operand]
        if not any(_same(sharding, where.sharding, default_kind) for where in same_operand):
            what = operand if operand is not None else "a value your function computed"
            went = (" or ".join(_text(w.sharding) for w in same_operand[:3]) if same_operand
                    else "nothing: they place no such value")
            return (f"your call's record says {what} was placed with jax.device_put on {_text(sharding)}, but the "
                    f"programs it handed over place it on {went}")
    if len(outputs) != len(leaves):
        return f"the programs it handed over compute {len(outputs)} values where your call returned {len(leaves)}"
    for leaf, where in zip(leaves, outputs):
        if where is None or leaf.kind != "jax_array" or not leaf.sharding or leaf.sharding.get("type") == "unreadable":
            continue
        if not _laid_out_alike(leaf, where, default_kind):
            return (f"your call's record says {leaf.path} is returned on {_text(leaf.sharding)}, but the programs it "
                    f"handed over return it on {_text(where.sharding)}")
    return None


def _laid_out_alike(leaf: Leaf, where: Where, default_kind: str | None) -> bool:
    """Whether a returned leaf is where the witness's output is: the same memory kind, and each
    device holding the same block, as the leaf's sharding describes it and as its shards say.
    Only the layout: a program's output sharding, compiled from StableHLO, names no mesh axes
    (``_axis_0``), so the names are the child's to say."""
    kinds = [d.get("memory_kind") or default_kind for d in (leaf.sharding or {}, where.sharding)]
    shards = {int(s["device"]): tuple((int(a), int(b)) for a, b in s["index"]) for s in leaf.shards}
    described = blocks_of(leaf.sharding or {}, leaf.shape or ())
    if described is None:  # a description too vague to lay out: its devices, at least
        return kinds[0] == kinds[1] and _devices(leaf.sharding or {}) == sorted(where.blocks) \
            and (not shards or shards == where.blocks)
    return kinds[0] == kinds[1] and described == where.blocks and (not shards or shards == where.blocks)


def _made(account: dict[str, Any], paths: Sequence[str], placed: Sequence[Placed]) -> list[tuple[str | None, Where]]:
    """What each witnessed place step placed: the argument leaf's path (directly, or a copy of
    it placed again), or None for any other value; and where it went."""
    steps = account.get("steps", [])
    source: dict[int, str | None] = {}
    found = []
    for each in placed:
        ref = steps[each.step]["reads"][0] if 0 <= each.step < len(steps) else None
        operand = None
        if isinstance(ref, list) and ref[:1] == ["arg"] and 0 <= ref[1] < len(paths):
            operand = paths[ref[1]]
        elif isinstance(ref, list) and ref[:1] == ["step"] and ref[2:] == [0]:
            operand = source.get(ref[1])
        source[each.step] = operand
        found.append((operand, each.where))
    return found


def _program_puts(program: Program | None) -> list[tuple[str | None, dict[str, Any]]]:
    """The eager ``jax.device_put`` placements of the call's program, each with the argument
    leaf it placed (or a copy of it placed again), or None for any other value."""
    if program is None:
        return []
    source: dict[int | None, str | None] = dict(zip(program.inputs, program.input_paths))
    found = []
    for p in program.all_placements():
        if p.via == "device_put" and not p.within:
            operand = source.get(p.source)
            source[p.placed] = operand
            found.append((operand, p.sharding))
    return found


def _same(claimed: dict[str, Any], confirmed: dict[str, Any], default_kind: str | None) -> bool:
    """Whether two described shardings agree on what the checks read."""
    if claimed.get("type") in ("default", None):
        return True
    kinds = [d.get("memory_kind") or default_kind for d in (claimed, confirmed)]
    if kinds[0] != kinds[1]:
        return False
    if claimed.get("type") == confirmed.get("type") == "NamedSharding":
        types = [d.get("axis_types") for d in (claimed, confirmed)]
        return (all(claimed.get(k) == confirmed.get(k) for k in ("mesh_devices", "mesh_shape", "axis_names"))
                and _spec(claimed.get("spec")) == _spec(confirmed.get("spec"))
                and (None in types or types[0] == types[1]))
    return _devices(claimed) == _devices(confirmed)


def _spec(spec: Any) -> tuple[Any, ...]:
    """A described spec, each entry one way (an axis, a tuple of axes, None), trailing Nones dropped."""
    entries = [tuple(e) if isinstance(e, list) and len(e) != 1 else (e[0] if isinstance(e, list) else e)
               for e in (spec if isinstance(spec, list) else [])]
    entries = [None if e == () else e for e in entries]
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def _devices(sharding: dict[str, Any]) -> list[int]:
    found = sharding.get("mesh_devices") if sharding.get("type") == "NamedSharding" else sharding.get("devices")
    return sorted(int(d) for d in found or ())


def _text(sharding: dict[str, Any]) -> str:
    """A described sharding in words, for a message."""
    if sharding.get("type") == "NamedSharding":
        spec = ", ".join(repr(e) for e in _spec(sharding.get("spec")))
        return (f"NamedSharding(a mesh of devices {sharding.get('mesh_devices')} shaped {sharding.get('mesh_shape')} "
                f"with axes {sharding.get('axis_names')}, P({spec}))")
    return f"{sharding.get('type')} on devices {_devices(sharding)}"
