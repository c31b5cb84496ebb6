"""What an operation's parameters must be, for ``UsesPrimitive(params=...)``.

Names alone say little of a collective: ``ppermute`` shifts whichever way its permutation
says, ``psum_scatter`` scatters along ``scatter_dimension``, tiled or not, and a ``scan`` runs
``length`` steps. A parameter is matched against a literal (``{"tiled": True}``,
``{"scatter_dimension": 0}``, ``{"length": 8}``) or against a matcher that needs the program
around the operation (``CyclicShift(1)``: every device sends to the next along the axis, as
long as the axis is). Matchers say in words what they want and what they found.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CyclicShift:
    """``ppermute``'s ``perm``: every position i of the axis sends to i + ``by`` (modulo the
    axis size), so every device both sends and receives once."""
    by: int

    def text(self) -> str:
        return f"a cyclic shift by {self.by:+d}"

    def matches(self, perm: Any, size: int | None) -> bool:
        return size is not None and _shift(perm, size) == self.by % size

    def observed(self, perm: Any, size: int | None) -> str:
        shift = _shift(perm, size) if size is not None else None
        if shift is not None:
            return f"a cyclic shift by {shift:+d}" + (f" (that is {shift - size:+d})" if shift > size // 2 else "")
        pairs = ", ".join(f"{a}→{b}" for a, b in _pairs(perm)[:8])
        return f"the permutation {pairs or 'of no pairs'}" + (" ..." if len(_pairs(perm)) > 8 else "")


def _pairs(perm: Any) -> list[tuple[int, int]]:
    if not isinstance(perm, list):
        return []
    return [(p[0], p[1]) for p in perm if isinstance(p, list) and len(p) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in p)]


def _shift(perm: Any, size: int) -> int | None:
    """The one shift every pair of ``perm`` makes over an axis of ``size``, or None."""
    pairs = _pairs(perm)
    if size <= 0 or len(pairs) != size or sorted(a for a, _ in pairs) != list(range(size)):
        return None
    shifts = {(b - a) % size for a, b in pairs}
    return shifts.pop() if len(shifts) == 1 else None


def matches(wanted: Any, value: Any, size: int | None) -> bool:
    """Whether a parameter's ``value`` is what ``wanted`` (a literal or a matcher) says."""
    if hasattr(wanted, "matches"):
        return wanted.matches(value, size)
    return _plain(wanted) == value


def wanted_text(name: str, wanted: Any) -> str:
    return wanted.text() if hasattr(wanted, "text") else f"{name}={_plain(wanted)!r}"


def observed_text(name: str, wanted: Any, value: Any, size: int | None) -> str:
    return wanted.observed(value, size) if hasattr(wanted, "observed") else f"{name}={value!r}"


def _plain(value: Any) -> Any:
    """A literal as the program's parameters hold it (tuples become lists, as in JSON)."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value
