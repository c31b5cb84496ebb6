"""grader.batch.warming: a class run too small to repay the variants' gradings leaves them to a
background process that starts once the run has exited, and nothing behind where that is off."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SEED_EXERCISE
from grader.batch.warming import LOCK, OFF, background_allowed, start
from grader.cache import warmed_marker
from grader.engine import warming_variants
from grader.exercise import load_exercise

JAXGRADE = str(Path(sys.executable).parent / "jaxgrade")


def test_nothing_outlives_the_command_when_switched_off_or_in_ci():
    assert background_allowed({}) and background_allowed({OFF: "0", "CI": "false"})
    assert not background_allowed({OFF: "1"})
    assert not background_allowed({"CI": "true"})


@pytest.fixture
def small_exercise(tmp_path: Path) -> Path:
    """The seed exercise with two variants that compile (one right, one wrong), so the
    background's gradings take seconds."""
    root = tmp_path / "exercises"
    copy = root / SEED_EXERCISE.name
    shutil.copytree(SEED_EXERCISE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for variant in (*(copy / "right").iterdir(), *(copy / "wrong").iterdir()):
        if variant.name not in ("jitted.py", "value_mean.py", "load_syntax_error.py"):
            variant.unlink()
    return root


def _run_one_student(tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch, **extra: str) -> Path:
    """``jaxgrade grade`` of a class of one (the reference) with a cache of its own, which this
    process then reads too; the variants' marker (not written yet)."""
    env = {k: v for k, v in os.environ.items() if k not in (OFF, "CI")}
    env.update(JAXGRADE_EXERCISES=str(root), JAXGRADE_CACHE=str(tmp_path / "cache"), **extra)
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copyfile(SEED_EXERCISE / "reference.py", folder / "alice.py")
    done = subprocess.run([JAXGRADE, "grade", str(folder), "-e", SEED_EXERCISE.name, "-o", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("JAXGRADE_CACHE", env["JAXGRADE_CACHE"])
    exercise = load_exercise(root / SEED_EXERCISE.name)
    return warmed_marker(exercise.slug, exercise.fingerprint, "variants")


@pytest.mark.slow
def test_a_small_class_run_leaves_the_variants_to_a_background_process(small_exercise, tmp_path, monkeypatch):
    exercise = load_exercise(small_exercise / SEED_EXERCISE.name)
    assert [p.name for p in warming_variants(exercise)] == ["jitted.py", "value_mean.py"]
    marker = _run_one_student(tmp_path, small_exercise, monkeypatch)
    deadline = time.monotonic() + 240
    while not marker.exists():
        assert time.monotonic() < deadline, "the variants were not graded in the background"
        time.sleep(0.5)
    assert json.loads(marker.read_text()) == ["right/jitted.py", "wrong/value_mean.py"]
    with open(marker.parent / LOCK) as lock:  # the background process is done with it
        deadline = time.monotonic() + 60
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
    assert not start(exercise)  # filled: no run starts it again


@pytest.mark.slow
def test_switched_off_a_class_run_leaves_nothing_behind(small_exercise, tmp_path, monkeypatch):
    marker = _run_one_student(tmp_path, small_exercise, monkeypatch, **{OFF: "1"})
    time.sleep(3)  # a background process would have taken its lock by now (the run has exited)
    assert not (marker.parent / LOCK).exists() and not marker.exists()
    monkeypatch.setenv(OFF, "1")
    assert not start(load_exercise(small_exercise / SEED_EXERCISE.name))
