"""A plain (non-editable) install carries the exercises and templates with the package, builds
without a warning, and grades from wherever it is installed."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE

pytestmark = pytest.mark.slow  # a real pip build, then a real grading with the installed copy


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``pip install .`` into a folder of its own, with pip's and the build's output kept."""
    target = tmp_path_factory.mktemp("install") / "site"
    # The test machine sets PYTHONDONTWRITEBYTECODE, which makes setuptools say it skips
    # byte-compiling: a note about this machine, not about the package.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    build = subprocess.run([sys.executable, "-m", "pip", "install", "--verbose", "--no-deps",
                            "--no-compile", "--target", str(target), str(REPO)],
                           capture_output=True, text=True, timeout=300, cwd=target.parent, env=env)
    assert build.returncode == 0, build.stderr[-2000:]
    return target, build.stdout + build.stderr


def test_pip_install_prints_no_warning(installed):
    """The build backend's own output included (--verbose): no "Package would be ignored" or
    any other warning, so a real one is not lost among the expected ones."""
    _, output = installed
    warnings = [line for line in output.splitlines() if re.search(r"warn|deprecat", line, re.IGNORECASE)]
    assert not warnings, "\n".join(warnings[:20])


def test_non_editable_install_carries_exercises_and_templates(installed, tmp_path):
    target, _ = installed
    package = target / "grader"
    for relative in ("exercises/named_sharding_replicated/exercise.toml",
                     "exercises/named_sharding_replicated/checks.py",
                     "exercises/named_sharding_replicated/wrong/structure_no_placement.py",
                     "templates/report.txt.j2", "templates/export/gradescope/run_autograder"):
        assert (package / relative).is_file(), relative
    assert not list(package.rglob("*.pyc")), "bytecode of the checkout must not ship"
    # The installed copy finds its own exercises and templates, not the source tree's.
    probe = ("import grader.exercise as e, grader.report.render as r; "
             "print(e.exercises_root()); print(r.templates_root()); "
             "print(e.find_exercise('named_sharding_replicated').title)")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                           cwd=tmp_path, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert shown.returncode == 0, shown.stderr
    root, templates, title = shown.stdout.splitlines()
    assert Path(root) == package / "exercises" and Path(templates) == package / "templates"
    assert title == "NamedSharding (replicated)"


def test_installed_wheel_grades_a_submission_outside_the_checkout(installed, tmp_path):
    """``jaxgrade check`` run from the installed copy, in a folder that is not the checkout:
    the reference solution gets full marks, and a known-wrong variant loses the points of its
    category, so the grading (sandboxed child included) really ran from the install."""
    target, _ = installed
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin", "NO_COLOR": "1",
           "JAXGRADE_CACHE": os.environ["JAXGRADE_CACHE"]}
    scores = {}
    for name, source in (("right", SEED_EXERCISE / "reference.py"),
                         ("wrong", SEED_EXERCISE / "wrong" / "structure_no_placement.py")):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(source, folder / "solution.py")
        done = subprocess.run([sys.executable, "-m", "grader", "check", "solution.py", "-e",
                               "named_sharding_replicated", "--format", "json"],
                              capture_output=True, text=True, timeout=300, cwd=folder, env=env)
        assert done.returncode in (0, 1), done.stderr[-2000:]
        report = json.loads(done.stdout)
        scores[name] = (report["score"], report["max_score"], done.returncode)
    right, wrong = scores["right"], scores["wrong"]
    assert right[0] == right[1] > 0 and right[2] == 0, scores
    assert wrong[0] < wrong[1] and wrong[2] == 1, scores
