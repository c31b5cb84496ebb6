"""What the witness (``grader.witness``) made of a call's account, judged against what the call
returned: ``reproduced`` (the account computes the returned value: the programs it hands over
are what ran, and the witness's own reading of them stands for the child's), ``diverged`` (it
computes something else, or calls into the host: what the submission reported is not what it
computed) or ``unverifiable`` (no account, or one the witness cannot run: no verdict either way,
so nothing is taken from the submission for it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from grader.observe.returned import CompiledProgram, Leaf, parse_programs, safe_text
from grader.wire import decode_array

Status = Literal["reproduced", "diverged", "unverifiable"]
# How far a value computed again may be from the call's (the same XLA programs on the same
# machine agree exactly; a program compiled inside another differs at most by reassociation).
RELATIVE = 1e-6


@dataclass(frozen=True)
class Witnessed:
    status: Status
    detail: str = ""
    programs: tuple[CompiledProgram, ...] = ()  # read from the witness's own compilation
    breaks: tuple[str, ...] = ()  # steps that could not be handed over (host callbacks)


def witnessed(answer: Any, leaves: tuple[Leaf, ...]) -> Witnessed:
    """The verdict on one account: the witness's ``answer`` against the call's returned ``leaves``."""
    if not isinstance(answer, dict):
        return Witnessed("unverifiable", "the witness gave no answer")
    if answer.get("ok") is not True:
        if isinstance(answer.get("refused"), str):
            return Witnessed("diverged", safe_text(answer["refused"], 300))
        if isinstance(answer.get("malformed"), str):
            return Witnessed("diverged", "the account of the call is malformed: " + safe_text(answer["malformed"], 300))
        return Witnessed("unverifiable", safe_text(answer.get("unverifiable", "the witness could not run it"), 300))
    try:
        programs = parse_programs(answer.get("programs", []))
        outputs = answer["outputs"]
        breaks = tuple(safe_text(b, 300) for b in answer.get("breaks", []))[:16]
    except (KeyError, TypeError, ValueError) as error:
        return Witnessed("unverifiable", f"the witness's answer is malformed ({error})")
    if len(outputs) != len(leaves):
        return Witnessed("diverged", f"it computes {len(outputs)} values where the call returned {len(leaves)}")
    for leaf, output in zip(leaves, outputs):
        differs = _differs(leaf, output)
        if differs:
            return Witnessed("diverged", f"{leaf.path}: {differs}")
    return Witnessed("reproduced", "", programs, breaks)


def _differs(leaf: Leaf, output: Any) -> str | None:
    """Why ``output`` (the account's value) is not the returned leaf, or None."""
    if leaf.array is None or output is None:
        return None  # not a value of numbers on both sides: nothing to compare
    computed = decode_array(output)
    returned = leaf.array
    if computed.shape != returned.shape:
        return f"the account computes shape {computed.shape}, the call returned {returned.shape}"
    if computed.size == 0 or np.array_equal(computed, returned, equal_nan=computed.dtype.kind in "fc"):
        return None
    a, b = computed.astype(np.complex128), returned.astype(np.complex128)
    same = (a == b) | (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= RELATIVE * np.maximum(np.abs(a), np.abs(b)))
    if bool(np.all(same)):
        return None
    worst = int(np.argmax(~same.ravel()))
    return (f"the account computes {computed.ravel()[worst]!r} at element {worst}, the call returned "
            f"{returned.ravel()[worst]!r}")
