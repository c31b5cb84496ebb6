"""``grader.check()`` through the warm service: the request a notebook's kernel sends instead of
grading its cells itself (kind "cells", beside the CLI's "check"), and what the service does
with it.

The kernel sends the cells it ran as typed, the exercise it chose for them (the slug
``grader.notebook.kernel_cells.chosen_exercise`` gave), the seed, its working folder (where helper
modules are read from) and its umask. The service grades them with ``grade_cells``, exactly as
the kernel would, in a scratch folder made for this check alone (0700, removed after it), the
child forked from its zygote; it sends the Report back as data (``Report.as_data``), which the
kernel rebuilds (``Report.from_data``) and shows.

A request comes from a kernel, where the student's code runs: it is read as hostile (``read``).
Only the fields below, each of its type and within its bounds (the cells' count and size, the
folder's length, the seed's range, a umask); the exercise is one of the catalogue's by its exact
slug (never a path: ``find_exercise`` joins a slug to the exercises' folder, and an exercise's
checks are imported here); the folder an existing absolute one. What the request could still
do, it could do from the kernel itself (the service is the same user's, SO_PEERCRED): read that
user's files (helpers come from the folder it names, and go only into this check's sandboxed
child) or keep the service busy (one check at a time: other kernels grade themselves after
``grader.warm.client.ACCEPT_S``). It never chooses where the service writes.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from grader.warm.frames import ENVELOPE

if TYPE_CHECKING:  # the kernel imports this module to ask; only the service grades
    from grader.report.result import Report
    from grader.sandbox.process import Launcher

KIND = "cells"
MAX_CELLS = 10_000  # a long session's history: far more cells than a notebook has
MAX_CHARACTERS = 2 << 20  # all cells together (a notebook's are ~50 KB); a larger history is graded in the kernel
MAX_FOLDER = 4096  # PATH_MAX
MAX_SEED = 1 << 64  # (the kernel takes any int: a larger one is graded there)
FIELDS = ENVELOPE | {"kind", "cells", "exercise", "seed", "cwd", "umask"}


@dataclass(frozen=True)
class CellsCheck:
    """A notebook check the service was asked for, every field checked."""
    cells: tuple[str, ...]
    exercise: str
    seed: int
    cwd: Path
    umask: int


def request(cells: Sequence[str], exercise: str, seed: int) -> dict[str, Any]:
    """This kernel's request for ``cells`` (``exercise``: a slug, ``seed``), less the fields
    every request has (grader.warm.client adds them)."""
    umask = os.umask(0o077)
    os.umask(umask)
    return {"kind": KIND, "cells": list(cells), "exercise": exercise, "seed": seed, "cwd": os.getcwd(), "umask": umask}


def read(fields: Mapping[str, Any], known: frozenset[str]) -> CellsCheck:
    """The check a request's ``fields`` ask for (``known``: the catalogue's slugs; the envelope,
    ``grader.warm.frames.ENVELOPE``, is the service's to compare); ValueError, saying why, for
    anything but the fields of ``request`` within their bounds."""
    if set(fields) != FIELDS or fields["kind"] != KIND:
        raise ValueError(f"not a notebook check's fields: {sorted(map(str, fields))[:20]}")
    cells, exercise, seed, cwd, umask = (fields[k] for k in ("cells", "exercise", "seed", "cwd", "umask"))
    if not isinstance(cells, list) or len(cells) > MAX_CELLS or not all(isinstance(c, str) for c in cells):
        raise ValueError(f"cells: a list of at most {MAX_CELLS} strings")
    if sum(map(len, cells)) > MAX_CHARACTERS:
        raise ValueError(f"cells: more than {MAX_CHARACTERS} characters")
    if not isinstance(exercise, str) or exercise not in known:
        raise ValueError("exercise: not a slug of the catalogue")
    if type(seed) is not int or abs(seed) >= MAX_SEED:
        raise ValueError("seed: not an integer in range")
    if not isinstance(cwd, str) or len(cwd) > MAX_FOLDER or "\0" in cwd or not os.path.isabs(cwd) \
            or not os.path.isdir(cwd):
        raise ValueError("cwd: not an existing absolute folder")
    if type(umask) is not int or not 0 <= umask <= 0o777:
        raise ValueError("umask: not a umask")
    return CellsCheck(tuple(cells), exercise, seed, Path(cwd), umask)


def grade(check: CellsCheck, launcher: Launcher) -> Report:
    """``check`` graded as the kernel would grade it (grader.notebook.kernel_cells), its child started by
    ``launcher`` (the service's zygote); a CheckCellError where the cells do not define the
    exercise's function (the kernel found they do: a request that lies)."""
    from grader.notebook.kernel_cells import chosen_exercise, grade_cells
    exercise = chosen_exercise(check.cells, check.exercise)
    with tempfile.TemporaryDirectory(prefix="jaxgrade-kernel-") as scratch:
        return grade_cells(check.cells, exercise, seed=check.seed, folder=Path(scratch), cwd=check.cwd,
                           launcher=launcher)
