"""A class run on a real full disk (#41.1): a small tmpfs is the grader's temporary folder and its
output folder. A classmate who fills every world-writable folder it can find fills only its own
scratch space, and the class is graded; when the grader's own disk runs short anyway, the run
says so in one line, the students it could not finish are "not graded, grade again" in the
gradebook, the others are graded, it never exits 4, and the same command finishes the job once
there is room."""
from __future__ import annotations

import csv
import ctypes
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SEED_EXERCISE

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs to fill needs root")]
HOSTILE = Path(__file__).parent / "hostile"
JAXGRADE = [sys.executable, "-m", "grader"]


@pytest.fixture
def small_disk():
    """An 8 MiB tmpfs at /mnt/jaxgrade-full-PID, mode 1777: a world-writable place of the machine
    (found by the scan as a mount point) that the grader writes on."""
    libc = ctypes.CDLL(None, use_errno=True)
    target = Path(f"/mnt/jaxgrade-full-{os.getpid()}")
    target.mkdir(parents=True)
    if libc.mount(b"tmpfs", str(target).encode(), b"tmpfs", 0, b"size=8m,mode=1777") != 0:
        target.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {os.strerror(ctypes.get_errno())}")
    (target / "tmp").mkdir(mode=0o755)
    yield target
    libc.umount2(str(target).encode(), 2)
    target.rmdir()


@pytest.fixture
def class_folder(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for student, variant in {"ada": "reference.py", "ben": "wrong/value_mean.py", "cy": "reference.py",
                             "dee": "reference.py", "eve": "wrong/value_mean.py"}.items():
        shutil.copyfile(SEED_EXERCISE / variant, folder / f"{student}.py")
    return folder


def _grade(folder: Path, disk: Path, *more: str) -> subprocess.Popen:
    env = {**os.environ, "NO_COLOR": "1", "TMPDIR": str(disk / "tmp")}
    return subprocess.Popen([*JAXGRADE, "grade", str(folder), "-e", SEED_EXERCISE.name, "-o", str(disk / "out"),
                             "-j", "1", *more], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _gradebook(out: Path) -> dict[str, dict[str, str]]:
    return {row["student"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


def _fill(disk: Path, leave_kib: int) -> Path:
    """Fill the disk, then give back ``leave_kib``: room for a gradebook, not for a student's reports."""
    filler = disk / "filler"
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(b"x" * (64 << 10))
                handle.flush()
        except OSError:
            pass
    os.truncate(filler, max(0, filler.stat().st_size - (leave_kib << 10)))
    return filler


CLASSMATES = {"ada": "passed", "ben": "failed", "cy": "passed", "dee": "passed", "eve": "failed"}


def _graded_with_mallory(small_disk: Path, class_folder: Path, hostile: str, folders: list[str], stop_mib: int,
                         mallory: str) -> None:
    """The class graded with mallory's ``hostile`` file writing into ``folders`` (at most
    ``stop_mib``): the run exits 0, every classmate graded as usual, mallory ``mallory``."""
    source = (HOSTILE / hostile).read_text()
    (class_folder / "mallory.py").write_text(source.replace("{FOLDERS}", repr(folders))
                                             .replace("{STOP_MIB}", str(stop_mib)))
    process = _grade(class_folder, small_disk)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stdout[-2000:] + stderr[-3000:]
    book = _gradebook(small_disk / "out")
    assert {s: book[s]["status"] for s in book} == {**CLASSMATES, "mallory": mallory}, book


def test_a_classmate_filling_every_world_writable_folder_fills_only_its_own_space(small_disk, class_folder):
    folders = ["/tmp", "/var/tmp", "/dev/shm", "/run/lock", str(small_disk)]
    _graded_with_mallory(small_disk, class_folder, "world_writable.py", folders, 64, "passed")
    report = (small_disk / "out" / "students" / "mallory" / "report.md").read_text()
    assert "WROTE 64 MiB" in report and "FULL" not in report  # its own 256 MiB of scratch: nothing shared filled
    assert not [p for f in folders for p in Path(f).iterdir() if p.name.startswith("left-by-student")]


# The disk is filled once the first result is written: on a busy machine every student may be
# graded by then (seen in the full suite on 2 cores), and then there is nothing left to mark.
@pytest.mark.xfail(strict=False, reason="races with the grading: all students may finish before the disk is filled")
def test_when_the_graders_own_disk_runs_short_the_rest_is_graded_and_said_in_one_line(small_disk, class_folder):
    out = small_disk / "out"
    process = _grade(class_folder, small_disk)
    deadline = time.monotonic() + 300
    while not list(out.glob("students/*/result.json")) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    filler = _fill(small_disk, leave_kib=24)  # after the first student: the others find no room
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 1, stdout[-2000:] + stderr[-3000:]
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.startswith("jaxgrade:")]
    assert len(lines) == 1 and "ran out of disk space" in lines[0] and "No space left on device" in lines[0], stderr
    book = _gradebook(out)
    graded = {s for s, row in book.items() if row["status"] in ("passed", "failed")}
    short = {s for s, row in book.items() if row["status"] == "not_graded"}
    assert graded and short and graded | short == {"ada", "ben", "cy", "dee", "eve"}, book
    assert "ada" in graded  # the one finished before the disk filled
    for student in short:
        assert "grade again" in book[student]["note"] and "No space left on device" in book[student]["note"], book
    assert f"{len(short)} student(s) not graded" in lines[0]

    filler.unlink()  # room again: the same command grades the rest and reuses what was graded
    process = _grade(class_folder, small_disk)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stdout[-2000:] + stderr[-3000:]
    assert f"{len(graded)} unchanged since the last run" in stdout, stdout
    book = _gradebook(out)
    assert {s: book[s]["status"] for s in book} == CLASSMATES, book


def test_a_classmate_writing_until_every_place_refuses_is_graded_with_the_class(small_disk, class_folder):
    """mallory writes into its working folder, /tmp, /var/tmp, /dev/shm, /run/lock and the
    grader's own disk until each refuses: each refuses because its own scratch space is full (one
    tmpfs holds all of them), so the grader's disk keeps its room, the class run exits 0 with
    every classmate graded, mallory fails for filling its scratch, and no file of mallory's is
    left in any of those folders."""
    folders = [".", "/tmp", "/var/tmp", "/dev/shm", "/run/lock", str(small_disk)]
    _graded_with_mallory(small_disk, class_folder, "fills_until_refused.py", folders, 2048, "failed")
    report = json.loads((small_disk / "out" / "students" / "mallory" / "report.json").read_text())
    if not report["environment"]["protections"]["temporary_files"]["active"]:
        pytest.skip("no mount namespace for the child here: it wrote the machine's own folders (stopped by the watch)")
    limits = next(c for c in report["checks"] if c["id"] == "limits.resources")
    assert limits["status"] == "failed" and "filled its 256 MiB of scratch space" in limits["message"], limits
    output = (small_disk / "out" / "students" / "mallory" / "report.md").read_text()
    for folder in folders:  # every place refused it: its own scratch was full, nothing shared was
        assert f"FULL {folder} No space left on device" in output, output[-3000:]
    wrote = int(re.search(r"WROTE (\d+) MiB", output)[1])
    assert 0 < wrote <= 256, output[-3000:]  # its 256 MiB of scratch at most, far from the 2048 it would write
    assert not [p for f in folders[1:] for p in Path(f).iterdir() if p.name.startswith("left-by-filler")]
