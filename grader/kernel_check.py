"""``grader.check()``: a notebook's check cell, answered from what its kernel ran.

A student in Jupyter, Colab or VS Code runs ``import grader; grader.check()`` in a cell (or
``grader.check("named_sharding_replicated")``). What is graded is what the kernel holds: every
cell run so far in this session, in the order it ran, as IPython recorded it as typed
(``history_manager.input_hist_raw``: ``%matplotlib inline`` as a magic, not as the
``get_ipython().run_line_magic(...)`` call the kernel executed). They become a notebook of
their own, each with its execution count, graded as ``jaxgrade check`` grades a saved one
(``grader.source``, ``grader.notebook_runs``: the definition run last is graded, a failing or
hanging demo is skipped and named, this check cell is recognised and left out) in the same
sandboxed child, never in the kernel: nothing of the student's runs in this process. The
exercise is the one whose function the cells define when there is exactly one. Helper modules
are read from the kernel's working folder; nothing is written there.

What cannot be graded (no IPython, no cell defining an exercise's function, several, a
misspelt exercise) is a ``CheckCellError``: one line in the cell, saying what to do.

Warm checks: a student checks again and again, and most of a check is the child importing JAX.
After each check the kernel starts the child of the next one (``grader.submission.early_child``:
the very child that grading would start, for the same exercise), which imports JAX while the
student edits; the next check uses it, and starts another. Each check still has a child of its
own that ran nothing before it (one check never sees another's files or state); the spare waits
in its sandbox, is closed after ``SPARE_IDLE_S`` unused, and when the kernel exits. The cells are
written to one scratch folder of the kernel's (``tempfile``), which the child never sees.
"""
from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from grader.errors import CheckCellError, ExerciseError
from grader.exercise import Exercise, exercises_for_source, find_exercise
from grader.report.result import Report
from grader.source import helpers_beside, python_of
from grader.submission import early_child

SHOWN_AS = "this notebook's cells, as run"
SPARE_IDLE_S = 600.0  # a spare child unused this long is closed (the next check starts its own)
_KERNEL: dict[str, Any] = {}  # "folder": the scratch folder; "spare": (slug, child, idle timer)
_LOCK = threading.Lock()


def check(exercise: str | None = None, *, seed: int = 0) -> Report:
    """Grade the cells this kernel ran against ``exercise`` (its slug; None: the one exercise
    whose function they define). The Report shows itself in the cell."""
    cells = kernel_cells(_shell())
    notebook = notebook_of(cells)
    source = python_of(notebook, ".ipynb").text
    chosen = _exercise(exercise, source)
    if chosen.slug not in {e.slug for e in exercises_for_source(source)}:  # the rule that found it, not a substring
        raise CheckCellError(f"no cell run so far defines {chosen.function}: run the cell that defines it, "
                             f"then this one again")
    from grader.engine import grade
    folder = _folder()
    cells_file, graded = folder / "kernel.ipynb", folder / "kernel.py"
    cells_file.write_bytes(notebook)
    helpers = helpers_beside(cells_file, chosen.function, Path.cwd())
    converted = python_of(notebook, ".ipynb", chosen.function, frozenset(h.stem for h in helpers))
    graded.write_text(converted.text, errors="surrogateescape")
    report = grade(chosen, graded, seed=seed, display_path=SHOWN_AS, helpers=helpers, notes=converted.notes,
                   early=_take_spare(chosen))
    _keep_spare(chosen, graded)
    return report


def kernel_cells(shell: Any) -> list[str]:
    """The cells this session ran, as typed, in the order run (a cell run twice is there twice,
    with its later count: the kernel holds what ran last)."""
    raw = list(getattr(shell.history_manager, "input_hist_raw", ()))
    return [text if isinstance(text, str) else "" for text in raw[1:]]  # [0] is IPython's empty entry


def notebook_of(cells: list[str]) -> bytes:
    """``cells`` as an nbformat 4 notebook, cell ``i`` with execution count ``i + 1``."""
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": [{"cell_type": "code", "id": f"run-{i + 1}", "execution_count": i + 1,
                                  "metadata": {}, "outputs": [], "source": text}
                                 for i, text in enumerate(cells)]}).encode()


def _folder() -> Path:
    with _LOCK:
        if "folder" not in _KERNEL:
            _KERNEL["folder"] = Path(tempfile.mkdtemp(prefix="jaxgrade-kernel-"))
            atexit.register(_close)
        return _KERNEL["folder"]


def _take_spare(exercise: Exercise) -> Any:
    """The spare child, when it was started for ``exercise`` (else it is closed); None without."""
    with _LOCK:
        spare = _KERNEL.pop("spare", None)
    if spare is None:
        return None
    slug, child, timer = spare
    timer.cancel()
    if slug == exercise.slug:
        return child
    child.close()
    return None


def _keep_spare(exercise: Exercise, graded: Path) -> None:
    child = early_child(exercise, graded)
    if child is None:
        return
    timer = threading.Timer(SPARE_IDLE_S, _close_spare, (child,))
    timer.daemon = True
    with _LOCK:
        _KERNEL["spare"] = (exercise.slug, child, timer)
    timer.start()


def _close_spare(child: Any) -> None:
    with _LOCK:  # unless a check took it meanwhile
        spare = _KERNEL.get("spare")
        if spare is None or spare[1] is not child:
            return
        del _KERNEL["spare"]
    child.close()


def _close() -> None:
    with _LOCK:
        spare, folder = _KERNEL.pop("spare", None), _KERNEL.pop("folder", None)
    if spare is not None:
        spare[2].cancel()
        spare[1].close()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if shell is None or not hasattr(shell, "history_manager"):
        raise CheckCellError("grader.check() grades a notebook's cells from inside its kernel; outside one, "
                             "run jaxgrade check YOUR_FILE")
    return shell


def _exercise(slug: str | None, source: str) -> Any:
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
