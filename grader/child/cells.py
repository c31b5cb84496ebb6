"""Where a converted notebook's cells start, carried in the converted file itself.

A notebook is graded as one Python file (``grader.source``), but it runs as the student ran it:
cell by cell, a cell the graded function does not need skipped when it fails
(``grader.child.server``). The conversion ends the file with one comment line naming each
cell's number, its first line, and whether the function needs it; the child reads that line
back, with the cell whose definition of the graded function is graded when a cell below it
defines the function too (``!``: the kernel ran it last, ``grader.notebook.runs``). The table
travels inside the file so that every entry point that grades a file (``jaxgrade check``, a
class run, Dask workers, the autograders) carries it without being told.

A ``.py`` file has no such line and runs whole, as it always did. One that writes the line
itself gains nothing it could not write in plain Python (``try: ... except Exception: pass``
around the same statements). Kept in the child package, apart from ``grader.source`` which writes
the line, so that the child, which reads it, imports only this.
"""
from __future__ import annotations

import re
from typing import NamedTuple

_PREFIX = "# jaxgrade: notebook cells at lines (* marks one the graded function does not need):"
_ITEM = rb"\d+@\d+\*?!?"
_LINE = re.compile(rb"^" + re.escape(_PREFIX.encode()) + rb" (?P<cells>" + _ITEM + rb"(?: " + _ITEM + rb")*)[ \t]*$")
_CELL = re.compile(rb"(\d+)@(\d+)(\*?)(!?)")


class Cell(NamedTuple):
    number: int      # as Jupyter numbers the notebook's cells (markdown ones too)
    first_line: int  # in the converted file
    needed: bool     # by the graded function (its definition, or what it uses): a failure here fails the load
    # its definition of the graded function is the one graded, though a cell below defines it too: the
    # kernel ran this one last (``grader.notebook.runs``); after the cells ran, the child binds it again
    graded: bool = False


def cells_line(cells: list[Cell]) -> str:
    """The comment line that ends a converted notebook (``!`` marks the cell whose definition is graded)."""
    return f"{_PREFIX} " + " ".join(f"{c.number}@{c.first_line}{'' if c.needed else '*'}{'!' if c.graded else ''}"
                                    for c in cells)


def read_cells(source: bytes) -> list[Cell] | None:
    """The cells a converted notebook's last line names, in order of their lines; None for a
    file that does not end with that line (a ``.py`` submission)."""
    last = source.rstrip(b"\r\n").rsplit(b"\n", 1)[-1]
    found = _LINE.match(last)
    if found is None:
        return None
    cells = [Cell(int(n), int(line), not star, bool(mark)) for n, line, star, mark in _CELL.findall(found.group("cells"))]
    return sorted(cells, key=lambda c: c.first_line)
