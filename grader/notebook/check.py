"""``grader.check()``: a notebook's check cell, answered from what its kernel ran.

A student in Jupyter, Colab or VS Code runs ``import grader; grader.check()`` in a cell (or
``grader.check("named_sharding_replicated")``). What is graded is what the kernel holds: every
cell run so far in this session, in the order it ran, graded as ``jaxgrade check`` grades a
saved notebook, in a sandboxed child, never in the kernel (grader.notebook.kernel_cells says how). What
cannot be graded (no IPython, no cell defining an exercise's function, several, a misspelt
exercise) is a ``CheckCellError``: one line in the cell, saying what to do.

Warm checks: a student checks again and again, and most of a check is a child importing JAX.
First, the check asks the user's warm grading service (grader.warm, as ``jaxgrade check`` does;
off with ``JAXGRADE_NO_DAEMON`` or ``CI``): the service grades the cells exactly as the kernel
would, its child forked from a zygote that imported JAX once for all the user's notebooks and
checks, and sends the report back as data, rebuilt here (``Report.from_data``). Whatever goes
wrong there (no service, a busy or dead one, a refusal, a malformed answer), the kernel grades
the cells itself, as it would without a service; nothing is shown twice, as only the report this
function returns is shown. Where no service listened, one is started in the background once the
kernel's check is done, for the next check.

Graded in the kernel, a check leaves a spare child for the next one
(``grader.submission.early_child``: the very child that grading would start, for the same
exercise), which imports JAX while the student edits; the next check graded in the kernel uses
it, and starts another. A check the service answered keeps none, and closes any left (one
zygote for the user, not one JAX process per open notebook). Each check still has a child of
its own that ran nothing before it (one check never sees another's files or state); the spare
waits in its sandbox, is closed after ``SPARE_IDLE_S`` unused, and when the kernel exits. The
kernel's cells are written to one scratch folder of its own (``tempfile``: 0700), which the
child never sees; the service writes them to one of its own, made for that check alone.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.errors import CheckCellError
from grader.authoring.exercise import Exercise
from grader.notebook.kernel_cells import GRADED, chosen_exercise, grade_cells, kernel_cells
from grader.report.result import Report
from grader.submission import early_child

if TYPE_CHECKING:  # the warm client is imported when a check asks the service, not with grader
    from grader.warm.client import Absent

SPARE_IDLE_S = 600.0  # a spare child unused this long is closed (the next check starts its own)
_KERNEL: dict[str, Any] = {}  # "folder": the scratch folder; "spare": (slug, child, idle timer)
_LOCK = threading.Lock()


def check(exercise: str | None = None, *, seed: int = 0) -> Report:
    """Grade the cells this kernel ran against ``exercise`` (its slug; None: the one exercise
    whose function they define). The Report shows itself in the cell."""
    from grader.warm.client import Absent
    cells = kernel_cells(_shell())
    chosen = chosen_exercise(cells, exercise)
    served = _through_service(cells, chosen, seed)
    if isinstance(served, Report):
        _drop_spare()
        return served
    folder = _folder()
    report = grade_cells(cells, chosen, seed=seed, folder=folder, cwd=Path.cwd(), early=_take_spare(chosen))
    _keep_spare(chosen, folder / GRADED)
    if isinstance(served, Absent):  # warmed up on the cells just graded, for this exercise's next check
        served.start(["check", os.fspath(folder / GRADED), "-e", chosen.slug])
    return report


def _through_service(cells: list[str], exercise: Exercise, seed: int) -> Report | Absent | None:
    """The report the warm service sent for ``cells``; else what ``report_through_service`` said
    (Absent: no service listened; None: grade here, start none)."""
    from grader.notebook.warm_cells import request
    from grader.warm.client import report_through_service
    answer = report_through_service(request(cells, exercise.slug, seed))
    if not isinstance(answer, dict):
        return answer
    try:
        report = Report.from_data(answer)
    except ValueError:
        return None
    return report if report.exercise == exercise.slug else None


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


def _drop_spare() -> None:
    """The spare child closed, if any: a check the service answered needs none."""
    with _LOCK:
        spare = _KERNEL.pop("spare", None)
    if spare is not None:
        spare[2].cancel()
        spare[1].close()


def _close_spare(child: Any) -> None:
    with _LOCK:  # unless a check took it meanwhile
        spare = _KERNEL.get("spare")
        if spare is None or spare[1] is not child:
            return
        del _KERNEL["spare"]
    child.close()


def _close() -> None:
    _drop_spare()
    with _LOCK:
        folder = _KERNEL.pop("folder", None)
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
