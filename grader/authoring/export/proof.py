"""An export proves itself before ``jaxgrade export`` exits 0: the exercise's reference (full
marks) and one wrong variant (less), where the exercise has them, are graded THROUGH what was
written, as its platform runs it, in a scratch folder laid out as the platform lays it out:

- Gradescope: the zip unpacked into ``ROOT/source``, ``run_autograder`` copied up, the file in
  ``ROOT/submission``; its ``ROOT/results/results.json`` read back;
- PrairieLearn: the question's ``tests/`` in ``ROOT/tests``, the file in ``ROOT/student``,
  ``tests/run.sh`` run with this Python (the image is not built here: its jaxgrade is the source
  this one bundled); ``ROOT/results/results.json`` read back;
- GitHub Classroom and GitLab CI: the repository copied, the file written as ``SLUG.py``, and the
  workflow's grading command (read from the CI file written) run with the bundled jaxgrade;
- the student pack: ``python check`` in a copy of the folder.

Why: an export that cannot grade (a helper package left out, a file its checks import missing)
makes every student's submission "the autograder failed", and only running it shows that. A
keyless exercise (a student pack of the track from a pip install) has no reference: its starter
is graded instead, which must be graded (any score), not fail. The runner sees
:data:`~grader.authoring.export.container_grading.EXPORT_PROOF`: it grades without the
container's protections, which need root and would close the exporter's own files.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from grader.authoring.exercise import Exercise
from grader.authoring.export.container_grading import EXPORT_PROOF
from grader.authoring.export.gradescope import lay_out
from grader.errors import ExportError

# One grading through an exported runner: the exercise's limits, plus starting Python and JAX.
_START_S = 120


@dataclass(frozen=True)
class Trial:
    """A file the proof grades, and what it must get."""
    name: str  # as the message names it
    source: Path
    full_marks: bool | None  # None: any grade, as long as it is one (a starter)


@dataclass(frozen=True)
class Ran:
    """What a runner made of a trial: graded (with full marks or not), or not graded at all."""
    graded: bool
    full_marks: bool
    said: str  # what it printed or wrote, for the message when it is not as expected


def trials(exercise: Exercise, visible_only: bool) -> list[Trial]:
    """The reference and the first wrong variant (``jaxgrade validate`` proved it loses points);
    the starter when there is no key. An export students hold grades the visible checks only
    (``visible_only``): where some are hidden, the variant may lose its points to those alone,
    so the reference is graded by itself."""
    if not exercise.has_key:
        return [Trial("the starter (no answer key here to grade instead)", exercise.starter, None)]
    hidden = visible_only and any(exercise.visibility_of(c.id) != "visible" for c in exercise.checks)
    wrong = [] if hidden else exercise.variants("wrong")[:1]
    return [Trial("the reference", exercise.reference, True),
            *(Trial(f"wrong/{v.path.name}", v.path, False) for v in wrong)]


def _environment(path: list[str] | None = None) -> dict[str, str]:
    """This process's environment for a runner: no exercise folders of this command's choosing
    (the runner sets its own), no compilation cache to warm (the proof stays a few seconds), and
    the proof's mark."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAXGRADE_EXERCISES", "PYTHONPATH")}
    env.update({"JAXGRADE_CACHE": "off", EXPORT_PROOF: "1", "JAXGRADE_NO_DAEMON": "1"})
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    return env


def _run(command: list[str], cwd: Path, env: dict[str, str], exercise: Exercise) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=exercise.limits.total_s + _START_S)
    except subprocess.TimeoutExpired:
        raise ExportError(f"{shlex.join(command)} did not finish within {exercise.limits.total_s + _START_S:g} s") \
            from None


def _tail(done: subprocess.CompletedProcess) -> str:
    text = (done.stdout + done.stderr).strip()
    return text[-1500:] if text else "(it printed nothing)"


def _results(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _gradescope(export: Path, exercise: Exercise, trial: Trial, root: Path) -> Ran:
    lay_out(export, root)
    shutil.copy(trial.source, root / "submission" / f"{exercise.slug}.py")
    env = {**_environment(), "JAXGRADE_AUTOGRADER_ROOT": str(root), "JAXGRADE_PYTHON": sys.executable}
    done = _run([str(root / "run_autograder")], root, env, exercise)
    results = _results(root / "results" / "results.json")
    if done.returncode != 0 or results is None or "score" not in results:
        return Ran(False, False, f"run_autograder exited {done.returncode} with no results.json: {_tail(done)}")
    lost = [t.get("name", "") for t in results.get("tests") or [] if t.get("score") != t.get("max_score")]
    return Ran(True, results["score"] >= exercise.max_score,
                   f"It scored {results['score']:g}/{exercise.max_score:g}" + (f", losing {'; '.join(lost)}" if lost else ""))


def _prairielearn(export: Path, exercise: Exercise, trial: Trial, root: Path) -> Ran:
    shutil.copytree(export / "tests", root / "tests", symlinks=True)
    (root / "student").mkdir()
    shutil.copy(trial.source, root / "student" / f"{exercise.slug}.py")
    env = {**_environment(), "JAXGRADE_GRADE_ROOT": str(root), "JAXGRADE_PYTHON": sys.executable}
    done = _run(["bash", str(root / "tests" / "run.sh")], root, env, exercise)
    results = _results(root / "results" / "results.json")
    if done.returncode != 0 or results is None or not results.get("gradable"):
        said = (results or {}).get("message") or _tail(done)
        return Ran(False, False, f"run.sh exited {done.returncode}, not gradable: {said}")
    return Ran(True, results.get("score") == 1, f"It scored {results.get('score')} of 1.")


# A CI file's step or script line that grades: ``run: python check ...`` (GitHub), ``- python check ...`` (GitLab).
_GRADING_LINE = re.compile(r"^\s*(?:-\s*|run:\s*)(python check\b.*?)\s*$", re.MULTILINE)


def _grading_command(export: Path) -> str:
    """The CI file's command that grades (the one running ``python check``), as the runner runs it;
    the student pack's is the one its README gives."""
    for name in (".github/workflows/classroom.yml", ".gitlab-ci.yml"):
        if (export / name).is_file():
            found = _GRADING_LINE.findall((export / name).read_text())
            if len(found) != 1:
                raise ExportError(f"{export / name}: found {len(found)} steps running python check, expected one")
            return found[0]
    return "python check"


def _repository(export: Path, exercise: Exercise, trial: Trial, root: Path) -> Ran:
    """A student's folder or CI repository: the grading command run in a copy, ``python`` being
    this interpreter and jaxgrade the bundled source where the repository carries one (what its
    CI installs), else this installed jaxgrade (what the student installs)."""
    work = root / "repository"
    shutil.copytree(export, work, symlinks=True)
    shutil.copy(trial.source, work / f"{exercise.slug}.py")
    (root / "bin").mkdir()
    python = root / "bin" / "python"  # a script, not a link: a venv's python finds its venv from its own path
    python.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    python.chmod(0o755)
    bundled = work / ".jaxgrade" / "jaxgrade"
    env = _environment([str(bundled)] if bundled.is_dir() else None)
    env.update({"PATH": f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}",
                "GITHUB_OUTPUT": str(root / "github_output"), "GITHUB_STEP_SUMMARY": str(root / "step_summary")})
    command = _grading_command(export)
    done = _run(["bash", "-c", command], work, env, exercise)
    # what each command leaves when it graded: the Classroom step's output, GitLab's report, the text report
    reported = (root / "github_output").is_file() or (work / "jaxgrade-junit.xml").is_file() \
        or re.search(r"^Score: ", done.stdout, re.MULTILINE) is not None
    if done.returncode not in (0, 1) or not reported:  # 0: full marks, 1: graded without (grader.errors.ExitCode)
        return Ran(False, False, f"`{command}` exited {done.returncode} without a report: {_tail(done)}")
    return Ran(True, done.returncode == 0, _tail(done))


# Each export's runner, by the target's name (grader.authoring.export.command.TARGETS).
RUNNERS: dict[str, Callable[[Path, Exercise, Trial, Path], Ran]] = {
    "gradescope": _gradescope, "prairielearn": _prairielearn, "student": _repository,
    "github-classroom": _repository, "gitlab-ci": _repository}
# The exports a student holds: they grade the visible checks only.
_VISIBLE_ONLY = ("student", "github-classroom", "gitlab-ci")


def prove(target: str, exercise: Exercise, export: Path) -> str:
    """Grade each of :func:`trials` through the export at ``export``; what was proven, in words.
    Raises ExportError naming the first trial that did not come out as it must."""
    proven = []
    for trial in trials(exercise, target in _VISIBLE_ONLY):
        with tempfile.TemporaryDirectory(prefix="jaxgrade-proof-") as folder:
            outcome = RUNNERS[target](export, exercise, trial, Path(folder))
        wanted = "graded" if trial.full_marks is None else "full marks" if trial.full_marks else "less than full marks"
        if not outcome.graded or (trial.full_marks is not None and outcome.full_marks != trial.full_marks):
            got = "was not graded" if not outcome.graded else "got full marks" if outcome.full_marks else \
                "got less than full marks"
            raise ExportError(f"{export} does not grade as it must: {trial.name} of {exercise.slug} must get {wanted} "
                              f"through it, and {got}. {outcome.said}")
        proven.append(f"{trial.name}: {wanted}")
    return "; ".join(proven)
