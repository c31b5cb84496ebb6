"""A package jaxgrade needs that is broken on this Python (grader.dependencies): the check command
and a class run end with exit 3 and one line naming it and how to install it, never "internal
error ... a bug in jaxgrade" (exit 4). Run for real: jaxgrade in a subprocess whose PYTHONPATH
starts with a folder holding a flatbuffers that raises ImportError, with its own dist-info so that
the grader gives that folder to its warm process and children too (grader.importpath follows the
installed distributions), as on a host whose JAX was installed without it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE

LINE = "jaxgrade needs flatbuffers: pip install flatbuffers ("


@pytest.fixture
def broken_flatbuffers(tmp_path) -> dict[str, str]:
    shadow = tmp_path / "shadow"
    (shadow / "flatbuffers").mkdir(parents=True)
    (shadow / "flatbuffers" / "__init__.py").write_text("raise ImportError('this flatbuffers is broken')\n")
    info = shadow / "flatbuffers-99.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: flatbuffers\nVersion: 99.0\n")
    (info / "RECORD").write_text("flatbuffers/__init__.py,,\n")
    environ = {k: v for k, v in os.environ.items() if k not in ("JAXGRADE_DEBUG", "JAXGRADE_EXERCISES")}
    return {**environ, "PYTHONPATH": f"{shadow}{os.pathsep}{REPO}", "CI": "true", "JAXGRADE_CACHE": "off"}


def _jaxgrade(arguments: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *arguments], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def _says_so(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if LINE in line]
    assert len(lines) == 1 and lines[0].startswith(LINE), done.stderr
    assert "this flatbuffers is broken" in lines[0]
    assert "internal error" not in done.stderr and "bug in jaxgrade" not in done.stderr


@pytest.mark.slow
def test_check_names_the_broken_package(broken_flatbuffers, tmp_path):
    shutil.copy(SEED_EXERCISE / "reference.py", tmp_path / "solution.py")
    _says_so(_jaxgrade(["check", "solution.py", "-e", SEED_EXERCISE.name], tmp_path, broken_flatbuffers))


@pytest.mark.slow
def test_a_class_run_names_the_broken_package(broken_flatbuffers, tmp_path):
    (tmp_path / "class").mkdir()
    for student in ("alice", "bob"):
        shutil.copy(SEED_EXERCISE / "reference.py", tmp_path / "class" / f"{student}.py")
    done = _jaxgrade(["grade", "class", "-e", SEED_EXERCISE.name, "-o", "out"], tmp_path, broken_flatbuffers)
    _says_so(done)
    assert (tmp_path / "out" / "gradebook.csv").is_file()  # every student listed, not graded: grade again


def test_a_failure_that_is_no_import_is_no_missing_package():
    from grader.dependencies import needed_package, needed_package_in
    assert needed_package(RuntimeError("an unexpected state")) is None
    assert needed_package(ModuleNotFoundError("No module named 'grader.nowhere'", name="grader.nowhere")) is None
    assert needed_package_in("PoolError: the warm grading process has exited") is None
    missing = needed_package(ModuleNotFoundError("No module named 'ml_dtypes'", name="ml_dtypes"))
    assert missing.startswith("jaxgrade needs ml_dtypes: pip install ml_dtypes (")
