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
from grader.authoring.exercise import load_exercise

JAXGRADE = str(Path(sys.executable).parent / "jaxgrade")


def test_nothing_outlives_the_command_when_switched_off_or_in_ci():
    assert background_allowed({}) and background_allowed({OFF: "0", "CI": "false"})
    assert not background_allowed({OFF: "1"})
    assert not background_allowed({"CI": "true"})


AUTOGROUP = Path("/proc/self/autogroup")


def _priority(pid: int | str) -> tuple[int, str | None]:
    """A process's nice, and its autogroup's line ("/autogroup-N nice K"; None without autogroups)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    nice = int(stat.rsplit(")", 1)[1].split()[16])  # field 19 of proc(5), counted after the name
    autogroup = Path(f"/proc/{pid}/autogroup")
    return nice, autogroup.read_text().strip() if autogroup.exists() else None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_in_a_session_of_its_own_the_background_yields_the_cpu_autogroup_and_all():
    # A session of its own is an autogroup of its own, where a nice of its own yields only to itself.
    code = "import os; from grader.batch.warming import yield_the_cpu; yield_the_cpu(); print(os.getpid()); input()"
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                               start_new_session=True, cwd=Path(__file__).resolve().parent.parent)
    try:
        nice, autogroup = _priority(process.stdout.readline().strip())
    finally:
        process.communicate("\n", timeout=30)
    assert nice == 19
    if autogroup is not None:
        assert autogroup != AUTOGROUP.read_text().strip() and autogroup.endswith(" nice 19"), autogroup


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


def _background_processes(root: Path) -> list[int]:
    """The pids of grader.batch.warming's processes for an exercise under ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"grader.batch.warming import main" in part for part in command) and \
                any(part.startswith(str(root).encode()) for part in command):
            found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_a_small_class_run_leaves_the_variants_to_a_background_process(small_exercise, tmp_path, monkeypatch):
    exercise = load_exercise(small_exercise / SEED_EXERCISE.name)
    assert [p.name for p in warming_variants(exercise)] == ["jitted.py", "value_mean.py"]
    marker = _run_one_student(tmp_path, small_exercise, monkeypatch)
    deadline = time.monotonic() + 240
    seen: dict[int, tuple[int, str | None]] = {}  # each background process's priority, last seen
    parents: dict[int, int] = {}
    while not marker.exists():
        assert time.monotonic() < deadline, "the variants were not graded in the background"
        for pid in _background_processes(small_exercise):
            try:
                seen[pid] = _priority(pid)
                parents[pid] = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):  # it has just exited
                pass
        time.sleep(0.1)
    # one background process (the grading processes it forks carry its command line, and its priority)
    assert len([pid for pid in seen if parents.get(pid) not in seen]) == 1, (seen, parents)
    for nice, autogroup in seen.values():
        assert nice == 19 and (autogroup is None or autogroup.endswith(" nice 19")), (nice, autogroup)
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
