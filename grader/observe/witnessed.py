"""What the witness (``grader.witness``) made of a call's account, judged against what the call
returned: ``reproduced`` (the account computes the returned value: the programs it hands over
are what ran, and the witness's own reading of them stands for the child's), ``diverged`` (it
computes something else, or calls into the host: what the submission reported is not what it
computed) or ``unverifiable`` (no account, one the witness does not run, or a witness that gave no
answer: no verdict either way, and every check resting on it fails).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from grader.arguments import flatten
from grader.observe.confirmed import Placed, Ran, Where
from grader.observe.returned import CompiledProgram, Held, Leaf, parse_held, parse_programs, safe_text
from grader.wire import decode_array

Status = Literal["reproduced", "diverged", "unverifiable"]
# How far a value computed again may be from the call's, beyond the exercise's tolerance: a share
# of the leaf's largest magnitude. The same program compiled again (inside another, by another
# process) may fuse, contract and thread its reductions otherwise: a gradient through a scan of
# checkpointed layers differed by 1e-3 of a tiny element, 1e-8 of the leaf's largest.
RELATIVE = 1e-4


@dataclass(frozen=True)
class Witnessed:
    status: Status
    detail: str = ""
    programs: tuple[CompiledProgram, ...] = ()  # read from the witness's own compilation
    breaks: tuple[str, ...] = ()  # steps that could not be handed over (host callbacks)
    held: tuple[Held, ...] = ()  # the arrays the account held between programs, placed by the witness
    placed: tuple[Placed, ...] = ()  # where each of the account's place steps put its value
    outputs: tuple[Where | None, ...] = ()  # where each value it computed lives (None: no array)
    memory_kind: str | None = None  # what a sharding naming no memory kind places into
    ran: tuple[Ran, ...] = ()  # where each program step took its inputs and left its outputs


def witnessed(answer: Any, leaves: tuple[Leaf, ...], tolerance: Any = None) -> Witnessed:
    """The verdict on one account: the witness's ``answer`` against the call's returned ``leaves``,
    each within ``tolerance`` (the value checks' on the call's arguments: one number, an array or
    a tree shaped like the answer), or within ``RELATIVE`` of it where there is none."""
    if not isinstance(answer, dict):
        return Witnessed("unverifiable", "the witness gave no answer")
    if answer.get("ok") is not True:
        if isinstance(answer.get("malformed"), str):
            return Witnessed("diverged", "the account of the call is malformed: " + safe_text(answer["malformed"], 300))
        return Witnessed("unverifiable", safe_text(answer.get("unverifiable", "the witness could not run it"), 300))
    try:
        programs = parse_programs(answer.get("programs", []))
        outputs = answer["outputs"]
        breaks = tuple(safe_text(b, 300) for b in answer.get("breaks", []))[:16]
        held = parse_held(answer.get("held", []))
        placed = tuple(Placed(_index(p["step"]), _where(p)) for p in answer.get("placed", []))
        where = tuple(None if w is None else _where(w) for w in answer.get("output_shardings", [None] * len(outputs)))
        kind = answer.get("memory_kind")
        ran = tuple(_ran(r) for r in answer.get("ran", []))
        if len(where) != len(outputs) or not (kind is None or isinstance(kind, str)):
            raise ValueError("where its outputs live is not one description each")
    except (KeyError, TypeError, ValueError) as error:
        return Witnessed("unverifiable", f"the witness's answer is malformed ({error})")
    if len(outputs) != len(leaves):
        return Witnessed("diverged", f"it computes {len(outputs)} values where the call returned {len(leaves)}")
    limits = dict(flatten(tolerance, "result")) if isinstance(tolerance, (Mapping, tuple, list)) else None
    for leaf, output in zip(leaves, outputs):
        limit = limits.get(leaf.path) if limits is not None else tolerance
        differs = _differs(leaf, output, limit)
        if differs:
            return Witnessed("diverged", f"{leaf.path}: {differs}")
    return Witnessed("reproduced", "", programs, breaks, held, placed, where, kind, ran)


def _index(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError(f"{value!r} is no index")
    return value


def _ran(data: Any) -> Ran:
    """A program step the witness ran (``grader.witness.rerun``'s ``ran``)."""
    manual = data["manual"]
    if manual is not None and not (isinstance(manual, list) and all(isinstance(m, dict) for m in manual)):
        raise TypeError("a program's shard_map shardings are not descriptions")
    return Ran(_index(data["step"]), tuple(None if w is None else _where(w) for w in data["inputs"]),
               tuple(None if w is None else _where(w) for w in data["outputs"]),
               None if manual is None else tuple(manual))


def _where(data: Any) -> Where:
    """Where the witness says an array it made lives (``grader.witness.rerun``'s ``_where``)."""
    if not isinstance(data, dict) or not isinstance(data.get("sharding"), dict):
        raise TypeError("a sharding is not described")
    blocks = {_index(device): tuple((int(start), int(stop)) for start, stop in index)
              for device, index in data["blocks"]}
    return Where(data["sharding"], blocks)


def _differs(leaf: Leaf, output: Any, limit: Any) -> str | None:
    """Why ``output`` (the account's value) is not the returned leaf, or None: each element equal,
    or within ``limit`` (an absolute bound broadcast to the leaf) or ``RELATIVE`` of the leaf's
    largest magnitude."""
    if leaf.array is None or output is None:
        return None  # not a value of numbers on both sides: nothing to compare
    computed = decode_array(output)
    returned = leaf.array
    if computed.shape != returned.shape:
        return f"the account computes shape {computed.shape}, the call returned {returned.shape}"
    if computed.size == 0 or np.array_equal(computed, returned, equal_nan=computed.dtype.kind in "fc"):
        return None
    a, b = computed.astype(np.complex128), returned.astype(np.complex128)
    with np.errstate(invalid="ignore"):
        scale = np.nanmax(np.abs(np.concatenate([a.ravel(), b.ravel()])), initial=0.0)
    bound = np.full(a.shape, RELATIVE * (scale if np.isfinite(scale) else 0.0))
    if limit is not None:
        try:
            bound = np.fmax(bound, np.broadcast_to(np.asarray(limit, np.float64), a.shape))
        except ValueError:  # a tolerance not shaped like this leaf (a type mistake): its largest bound
            bound = np.fmax(bound, float(np.nanmax(np.asarray(limit, np.float64), initial=0.0)))
    with np.errstate(invalid="ignore", over="ignore"):
        same = (a == b) | (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= bound)
    if bool(np.all(same)):
        return None
    worst = int(np.argmax(~same.ravel()))
    return (f"the account computes {computed.ravel()[worst]!r} at element {worst}, the call returned "
            f"{returned.ravel()[worst]!r}")
