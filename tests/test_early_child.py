"""`jaxgrade check` starts the warm process its child and the witness fork from first thing
(grader.cli._early_pool), so that its JAX import overlaps the parent's own imports (#43, #55); a
notebook check spawns its child early (grader.submission.early_child), which the grading uses only
when it was launched exactly as the grading would launch its own (grader.sandbox.process.Launch).
The report is the same byte for byte, and on every way out, errors included, nothing is left running."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE
from grader import cli
from grader.engine import grade, warm_compile_cache
from grader.authoring.exercise import load_exercise
from grader.sandbox import process
from grader.sandbox.settling import settle
from grader.submission import early_child
from grader.sandbox.reaper import marked_processes

JAXGRADE = [sys.executable, "-m", "grader"]
REFERENCE = SEED_EXERCISE / "reference.py"


def left_running(pid: int) -> list[int]:
    """The live processes a grader of process ``pid`` started (its children carry its pid in
    their environment marker), a moment's grace given to the kernel to reap what was killed."""
    deadline = time.monotonic() + 0.5
    while (found := marked_processes(f"{pid}-")) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def jaxgrade_check(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], list[int]]:
    """`jaxgrade check ARGS` as a real process; what it printed and what it left running."""
    environment = {**os.environ, "NO_COLOR": "1", **(env or {})}
    with subprocess.Popen([*JAXGRADE, "check", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=REPO, env=environment) as running:
        stdout, stderr = running.communicate(timeout=120)
    return subprocess.CompletedProcess(running.args, running.returncode, stdout, stderr), left_running(running.pid)


@pytest.fixture(scope="module")
def warmed(seed_exercise):
    """The seed exercise's compilation cache filled by its reference: `jaxgrade check` then spawns early."""
    assert warm_compile_cache(seed_exercise) is not None


@pytest.fixture
def counted_children(monkeypatch):
    """How many children were spawned (ChildProcess made) since the fixture began."""
    made: list[process.ChildProcess] = []
    original = process.ChildProcess.__init__

    def counting(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if self.role is process.CHILD:  # not the witnesses, started the same way
            made.append(self)

    monkeypatch.setattr(process.ChildProcess, "__init__", counting)
    return made


@pytest.fixture
def broken_exercises(tmp_path):
    """A folder of exercises (JAXGRADE_EXERCISES) holding the seed exercise with a checks.py that
    fails as it is imported, the compilation cache off (so the early child is spawned: no
    reference has to fill it first)."""
    root = tmp_path / "exercises"
    shutil.copytree(SEED_EXERCISE, root / SEED_EXERCISE.name, ignore=shutil.ignore_patterns("__pycache__"))
    checks = root / SEED_EXERCISE.name / "checks.py"
    checks.write_text(checks.read_text() + "\nraise RuntimeError('an author left this in')\n")
    return {"JAXGRADE_EXERCISES": str(root), "JAXGRADE_CACHE": "off"}


def test_the_early_child_is_the_child_the_grading_uses(seed_exercise, warmed, counted_children):
    early = early_child(seed_exercise, REFERENCE)
    assert isinstance(early, process.ChildProcess)
    try:
        report = grade(seed_exercise, REFERENCE, early=early)
    finally:
        early.close()
    assert report.status == "passed", [(c.id, c.message) for c in report.checks if c.status != "passed"]
    assert counted_children == [early]  # no other child was spawned
    settle()  # a grading gives back what its child left in the background
    assert early.process.poll() is not None and not Path(early.workdir).exists()


def test_a_child_launched_otherwise_is_closed_unused_and_the_grading_spawns_its_own(seed_exercise, tmp_path, warmed,
                                                                                     counted_children):
    elsewhere = tmp_path / "elsewhere" / "reference.py"  # hides another folder than the submission's
    elsewhere.parent.mkdir()
    shutil.copy(REFERENCE, elsewhere)
    early = early_child(seed_exercise, elsewhere)
    assert isinstance(early, process.ChildProcess)
    report = grade(seed_exercise, REFERENCE, early=early)
    assert report.status == "passed"
    assert len(counted_children) == 2 and counted_children[0] is early
    settle()
    assert early.process.poll() is not None and not Path(early.workdir).exists()
    assert left_running(os.getpid()) == []


def test_a_notebook_or_an_exercise_whose_cache_is_not_filled_yet_spawns_in_the_old_order(seed_exercise, tmp_path,
                                                                                         monkeypatch,
                                                                                         counted_children):
    assert early_child(seed_exercise, tmp_path / "solution.ipynb") is None
    monkeypatch.setenv("JAXGRADE_CACHE", str(tmp_path / "empty-cache"))  # the reference would be graded first
    assert early_child(seed_exercise, REFERENCE) is None
    assert counted_children == []


@pytest.mark.parametrize("submission", ["reference.py", "wrong/load_syntax_error.py", "wrong/value_mean.py"])
def test_the_report_is_the_same_byte_for_byte_as_when_the_grading_spawns_the_child(submission, monkeypatch, capsys,
                                                                                    warmed, counted_children):
    arguments = ["check", str(SEED_EXERCISE / submission), "-e", SEED_EXERCISE.name]
    early_code = cli.main(arguments)
    early = capsys.readouterr()
    assert len(counted_children) == 1 and counted_children[0].launch.hide[0] == str((SEED_EXERCISE / submission).parent)
    monkeypatch.setattr(cli, "_early_pool", lambda exercise: None)  # children and the witness exec'd
    late_code = cli.main(arguments)
    late = capsys.readouterr()
    assert len(counted_children) == 2
    assert (early_code, early.out, early.err) == (late_code, late.out, late.err)
    assert early_code == (0 if submission == "reference.py" else 1)
    assert left_running(os.getpid()) == []


@pytest.mark.parametrize("args, message", [
    (("no_such_file.py",), "jaxgrade: no such file: no_such_file.py"),
    ((str(REFERENCE), "-e", "no_such_exercise"), "jaxgrade: unknown exercise 'no_such_exercise'"),
])
def test_a_usage_error_exits_2_and_leaves_nothing_running(args, message):
    done, running = jaxgrade_check(*args)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.startswith(message), done.stderr
    assert running == []


def test_an_exercise_that_fails_after_the_child_was_spawned_exits_2_and_leaves_nothing_running(broken_exercises):
    exercise = load_exercise(Path(broken_exercises["JAXGRADE_EXERCISES"]) / SEED_EXERCISE.name)
    done, running = jaxgrade_check(str(REFERENCE), "-e", SEED_EXERCISE.name, env=broken_exercises)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.strip() == (f"jaxgrade: {exercise.directory / 'checks.py'}, line "
                                   f"{len((exercise.directory / 'checks.py').read_text().splitlines())}: "
                                   "RuntimeError: an author left this in"), done.stderr
    assert running == []


@pytest.mark.parametrize("raised, code, line", [
    (RuntimeError("an unexpected state"), 4, "jaxgrade: internal error (RuntimeError: an unexpected state"),
    (KeyboardInterrupt(), 130, "jaxgrade: interrupted"),
])
def test_a_crash_or_an_interrupt_before_the_grading_took_the_child_leaves_nothing_running(
        seed_exercise, monkeypatch, capsys, warmed, counted_children, raised, code, line):
    import grader.engine

    def broken(*args, **kwargs):
        raise raised

    monkeypatch.setattr(grader.engine, "grade", broken)
    assert cli.main(["check", str(REFERENCE), "-e", SEED_EXERCISE.name]) == code
    assert capsys.readouterr().err.startswith(line)
    assert counted_children == []  # the grading never began: no child, and the warm process is gone
    assert left_running(os.getpid()) == []
