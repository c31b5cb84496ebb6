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

The shardings of jitted calls and the in_specs of shard_maps (``jit_in``, ``jit_out``,
``shard_map_in``) are confirmed by layout, each device's block, against what the witness
reports of each program it ran (``Ran``): a ``jit_in`` must be where some program reading that
operand (the argument leaf, or a copy of it placed again; any program for another value) takes
it, a ``jit_out`` where some program's output lives, a ``shard_map_in`` how some shard_map
(a manual computation) in a program reading the operand splits one of its inputs. Names are not
compared: a compiled program names its axes ``_axis_0``. Left on the child's word, never
accused: a jit or shard_map inside a jitted program's body (a ``jit_in``/``jit_out`` the call's
program places within a transformation), an input a program leaves to the compiler and that
arrived uncommitted, a claim no program the account ran reaches (a jit called on an eager
vmap's tracers, one behind a host callback), a shard_map in an account with a break or in a
program whose manual computations cannot be read, a shard_map no program holds (dead code
dropped when lowered), a layout over a dimension its mesh does not divide.
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
class Ran:
    """A ``program`` step the witness ran (its index in the account): where it took each input
    (None: an input it leaves to the compiler that arrived uncommitted, or no array), where each
    output lives, and how each of its shard_maps splits its inputs (described shardings; None
    when they cannot be read)."""
    step: int
    inputs: tuple[Where | None, ...]
    outputs: tuple[Where | None, ...]
    manual: tuple[dict[str, Any], ...] | None


@dataclass(frozen=True)
class Placed:
    """A ``place`` step the witness ran (its index in the account) and where its value went."""
    step: int
    where: Where


def unconfirmed(program: Program | None, placements: Sequence[dict[str, Any]], leaves: Sequence[Leaf],
                account: dict[str, Any], paths: Sequence[str], placed: Sequence[Placed],
                outputs: Sequence[Where | None], default_kind: str | None, ran: Sequence[Ran] = ()) -> str | None:
    """The first placement or returned layout in the child's record (``program``: the call as
    one program; ``placements``: its cheap record; ``leaves``) that the witness's run of
    ``account`` did not make, in words; None when every one is confirmed. ``paths``: the
    argument leaves' paths, in the account's order; ``ran``: the program steps it ran."""
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
    differs = _transformed(program, placements, account, paths, ran)
    if differs is not None:
        return differs
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


TRANSFORMED = {"jit_in": "the in_shardings of a jax.jit", "jit_out": "the out_shardings of a jax.jit",
               "shard_map_in": "the in_specs of a jax.shard_map"}


def _transformed(program: Program | None, placements: Sequence[dict[str, Any]], account: dict[str, Any],
                 paths: Sequence[str], ran: Sequence[Ran]) -> str | None:
    """The first jit or shard_map placement of the record that no program the witness ran lays
    out so, in words (see the module's docstring for what is confirmed); None when none."""
    steps = account.get("steps", [])
    broken = any(isinstance(s, dict) and s.get("kind") == "break" for s in steps)
    sources = _sources(steps, paths)
    claims = [(p["via"], p.get("operand"), p["sharding"]) for p in placements
              if p.get("via") in TRANSFORMED and p.get("operand") is not None]
    claims.extend(_program_claims(program))
    for via, operand, sharding in claims:
        read = [(r, [_operand(ref, paths, sources) for ref in _reads(steps, r.step)]) for r in ran]
        reached = [(r, operands) for r, operands in read if operand is None or operand in operands]
        if via == "shard_map_in":
            if broken or any(r.manual is None for r, _ in reached):
                continue
            seen = [m for r, _ in reached for m in r.manual or ()]
            found = [_split_alike(sharding, m) for m in seen]
        else:
            wheres = [w for r, operands in reached for w in _candidates(via, operand, r, operands)]
            seen = [w.sharding for w in wheres if w is not None]
            found = [None if w is None else _laid_out_as(sharding, w) for w in wheres]
        if found and not any(f is None or f for f in found):
            what = operand if operand is not None else "a value"
            went = " or ".join(sorted({_text(d) for d in seen})[:3])
            return (f"your call's record says {what} was placed by {TRANSFORMED[via]} on {_text(sharding)}, but the "
                    f"programs it handed over lay it out as {went}")
    return None


def _candidates(via: str, operand: str | None, ran: Ran, operands: list[str | None]) -> list[Where | None]:
    """Where a program step took the operand a jit_in names (any input, for another value), or
    left any output (jit_out)."""
    if via == "jit_out":
        return list(ran.outputs)
    return [w for w, o in zip(ran.inputs, operands) if operand is None or o == operand]


def _laid_out_as(claimed: dict[str, Any], where: Where) -> bool | None:
    """Whether each device holds the block of the array ``where`` that ``claimed`` gives it;
    None where ``claimed`` describes no layout of that shape (vague, or not dividing it)."""
    shape = tuple(max((b[d][1] for b in where.blocks.values()), default=0)
                  for d in range(len(next(iter(where.blocks.values()), ()))))
    described = blocks_of(claimed, shape)
    if described is None or any(max((b[d][1] for b in described.values()), default=n) != n
                                for d, n in enumerate(shape)):
        return None
    return described == where.blocks


def _split_alike(claimed: dict[str, Any], manual: dict[str, Any]) -> bool | None:
    """Whether a shard_map's claimed mesh and spec split an input as a manual computation's
    input sharding does, over any shape both divide; None where the claim describes no layout."""
    rank = max(len(_spec(claimed.get("spec"))), len(manual.get("spec") or ()))
    size = len(claimed.get("mesh_devices") or ()) * len(manual.get("mesh_devices") or ()) or 1
    described = blocks_of(claimed, (size,) * rank)
    return None if described is None else described == blocks_of(manual, (size,) * rank)


def _reads(steps: list[Any], index: int) -> list[Any]:
    step = steps[index] if 0 <= index < len(steps) else None
    return step.get("reads", []) if isinstance(step, dict) else []


def _sources(steps: list[Any], paths: Sequence[str]) -> dict[int, str | None]:
    """The argument leaf each place step placed (directly, or a copy of it placed again), or
    None for any other value."""
    source: dict[int, str | None] = {}
    for index, step in enumerate(steps):
        if isinstance(step, dict) and step.get("kind") == "place":
            source[index] = _operand(_reads(steps, index)[0], paths, source)
    return source


def _operand(ref: Any, paths: Sequence[str], sources: dict[int, str | None]) -> str | None:
    """The argument leaf a step's read names (directly, or a copy placed again), or None."""
    if isinstance(ref, list) and ref[:1] == ["arg"] and 0 <= ref[1] < len(paths):
        return paths[ref[1]]
    if isinstance(ref, list) and ref[:1] == ["step"] and ref[2:] == [0]:
        return sources.get(ref[1])
    return None


def _made(account: dict[str, Any], paths: Sequence[str], placed: Sequence[Placed]) -> list[tuple[str | None, Where]]:
    """What each witnessed place step placed: the argument leaf's path (directly, or a copy of
    it placed again), or None for any other value; and where it went."""
    steps = account.get("steps", [])
    sources = _sources(steps, paths)
    return [(sources.get(each.step), each.where) for each in placed]


def _program_puts(program: Program | None) -> list[tuple[str | None, dict[str, Any]]]:
    """The eager ``jax.device_put`` placements of the call's program, each with the argument
    leaf it placed (or a copy of it placed again), or None for any other value."""
    return [(operand, sharding) for via, operand, sharding in _program_placements(program) if via == "device_put"]


def _program_claims(program: Program | None) -> list[tuple[str, str | None, dict[str, Any]]]:
    """The call's program's jit shardings of eager calls and every shard_map's in_specs."""
    return [claim for claim in _program_placements(program) if claim[0] in TRANSFORMED]


def _program_placements(program: Program | None) -> list[tuple[str, str | None, dict[str, Any]]]:
    """The call program's eager placements (device_put; a jitted call's in/out shardings) and
    every shard_map's in_specs, each with the argument leaf it placed (or a copy of it placed
    again by an eager device_put), or None for any other value."""
    if program is None:
        return []
    source: dict[int | None, str | None] = dict(zip(program.inputs, program.input_paths))
    found = []
    for p in program.all_placements():
        if (p.via in ("device_put", "jit_in", "jit_out") and not p.within) or p.via == "shard_map_in":
            operand = source.get(p.source)
            if p.via == "device_put":
                source[p.placed] = operand
            found.append((p.via, operand, p.sharding))
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
