"""The child's ``sys.path``: the folders where the grader's process found the grader, JAX and
their dependencies, in that process's order, with what the child's own interpreter gives it.

A child runs ``python -I``: no PYTHONPATH, no user site-packages, no current folder, so on its
own it sees only its interpreter's standard library and site-packages. A grader run from a
PYTHONPATH install (an HPC ``module load``, ``pip install --target``), a ``--user`` install or
a checkout found JAX elsewhere, and the child must import it from exactly there: the same
files, not another version the interpreter also holds. The parent says which folders those
are (``grader.importpath``); the child keeps them, and of its own entries what ``-I`` gave it,
in the parent's order. Nothing else of the parent's path (its current folder, a script's
folder: perhaps a class's submissions) comes along, and the submission's own folder is put
after all of them (``grader.child.server``), so no file beside it stands in for a module.
Runs before anything but ``sys`` is imported from the grader; imports nothing of it.
"""
from __future__ import annotations

import os
import sys

# The folder that held only the grader's package (a checkout): dropped once the child's
# modules are imported (grader.child.entry), so ``import grader`` finds no live copy there.
grader_only: str | None = None


def merged(own: list[str], order: list[str], needed: list[str]) -> list[str]:
    """The child's path: of the parent's path ``order`` (real paths), the folders ``needed``
    (the grader's and its dependencies') and those the child's interpreter gave it (``own``),
    in the parent's order; then what the parent does not hold, needed first. Compared by real
    path; an entry of the child's own keeps its spelling."""
    spelled = {os.path.realpath(p): p for p in reversed(own) if p}
    keep = set(spelled) | set(needed)
    known = set(order)
    path = [spelled.get(p, p) for p in order if p in keep]
    path = [p for p in needed if p not in known] + path + [p for real, p in spelled.items() if real not in known]
    return list(dict.fromkeys(path))


def adopt(order: list[str], needed: list[str], grader: str) -> None:
    """Make this process's path the child's (:func:`merged`), the folder ``grader`` (which holds
    the grader's package) first while the child's own modules are imported."""
    global grader_only
    path = merged(sys.path, order, needed)
    if grader not in needed and os.path.realpath(grader) not in {os.path.realpath(p) for p in path}:
        grader_only = grader
        path.insert(0, grader)
    sys.path[:] = path
