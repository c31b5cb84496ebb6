"""What ``grader.check()`` grades: the cells a notebook's kernel ran, as a submission.

The cells are the kernel's history as typed (``kernel_cells``: ``%matplotlib inline`` as a
magic, not as the ``get_ipython().run_line_magic(...)`` call the kernel executed), in the order
they ran. They become a notebook of their own, each with its execution count, graded as
``jaxgrade check`` grades a saved one (``grader.source``, ``grader.notebook.runs``: the
definition run last is graded, a failing or hanging demo is skipped and named, the check cell
is recognised and left out) in a sandboxed child: nothing of the student's runs in the process
that grades. The exercise is the one whose function the cells define when there is exactly one
(``chosen_exercise``). Helper modules are read from the kernel's working folder; nothing is
written there.

Both places that grade a kernel's cells call ``grade_cells``, so they grade alike: the kernel
itself (grader.notebook.check), and the user's warm grading service when the kernel asks it to
(grader.notebook.warm_cells). Each passes a scratch folder that is its own (0700, ``tempfile``), which
the child never sees.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from grader.errors import CheckCellError, ExerciseError
from grader.authoring.exercise import Exercise, exercises_for_source, find_exercise
from grader.report.result import Report
from grader.source import helpers_beside, python_of

if TYPE_CHECKING:  # imported by the grading itself (grader.engine), not by the kernel's first check
    from grader.sandbox.process import ChildProcess, Launcher

SHOWN_AS = "this notebook's cells, as run"
GRADED = "kernel.py"  # the cells' Python in the scratch folder (its stem is the module the child imports)


def kernel_cells(shell: Any) -> list[str]:
    """The cells this session ran, as typed, in the order run (a cell run twice is there twice,
    with its later count: the kernel holds what ran last)."""
    raw = list(getattr(shell.history_manager, "input_hist_raw", ()))
    return [text if isinstance(text, str) else "" for text in raw[1:]]  # [0] is IPython's empty entry


def notebook_of(cells: Sequence[str]) -> bytes:
    """``cells`` as an nbformat 4 notebook, cell ``i`` with execution count ``i + 1``."""
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": [{"cell_type": "code", "id": f"run-{i + 1}", "execution_count": i + 1,
                                  "metadata": {}, "outputs": [], "source": text}
                                 for i, text in enumerate(cells)]}).encode()


def chosen_exercise(cells: Sequence[str], slug: str | None) -> Exercise:
    """The exercise ``cells`` are graded against: ``slug``'s, else the one whose function they
    define; a CheckCellError, saying what to do, for a misspelt slug, none or several, or an
    exercise whose function no cell defines."""
    source = python_of(notebook_of(cells), ".ipynb").text
    chosen = _exercise(slug, source)
    if chosen.slug not in {e.slug for e in exercises_for_source(source)}:  # the rule that found it, not a substring
        raise CheckCellError(f"no cell run so far defines {chosen.function}: run the cell that defines it, "
                             f"then this one again")
    return chosen


def grade_cells(cells: Sequence[str], exercise: Exercise, *, seed: int, folder: Path, cwd: Path,
                early: ChildProcess | None = None, launcher: Launcher | None = None) -> Report:
    """``cells`` graded against ``exercise``: written as a notebook and its Python into
    ``folder`` (a scratch folder of the caller's own), helpers read from ``cwd`` (the kernel's
    working folder). ``early``, ``launcher``: as in ``grader.engine.grade``."""
    from grader.engine import grade
    notebook = notebook_of(cells)
    cells_file, graded = folder / "kernel.ipynb", folder / GRADED
    cells_file.write_bytes(notebook)
    helpers = helpers_beside(cells_file, exercise.function, cwd)
    converted = python_of(notebook, ".ipynb", exercise.function, frozenset(h.stem for h in helpers))
    graded.write_text(converted.text, errors="surrogateescape")
    return grade(exercise, graded, seed=seed, display_path=SHOWN_AS, helpers=helpers, notes=converted.notes,
                 early=early, launcher=launcher)


def _exercise(slug: str | None, source: str) -> Exercise:
    if slug is not None:
        try:
            return find_exercise(slug)
        except ExerciseError as error:
            raise CheckCellError(str(error)) from None
    found = exercises_for_source(source)
    if len(found) == 1:
        return found[0]
    if found:
        named = ", ".join(f"{e.function} ({e.slug})" for e in found)
        raise CheckCellError(f"your cells define the functions of {len(found)} exercises, {named}: name the one to "
                             f"check, e.g. grader.check(\"{found[0].slug}\")")
    raise CheckCellError("no cell run so far defines an exercise's function: run the cell that defines it, then "
                         "this one again (or name the exercise: grader.check(\"SLUG\"))")
