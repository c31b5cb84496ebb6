"""A plain (non-editable) install carries the exercises and templates with the package, a wheel
and an editable install build without a warning, and the grader grades from wherever it is
installed: a wheel in a venv, in a user site-packages, in a ``--target`` folder on PYTHONPATH,
each with JAX and the rest in the same folder, where a child must find them."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE, base_python_without_jax, dependencies_into

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


# pip's own lines about this machine's pip configuration (an index location that is not there)
MACHINE = re.compile(r"WARNING: Location '.*' is ignored")
VISUALIZES = REPO / "tests" / "data" / "visualizes_its_layout.py"


def _warnings(log: str) -> list[str]:
    return [line for line in log.splitlines()
            if re.search(r"warn|deprecat", line, re.IGNORECASE) and not MACHINE.search(line)]


def _quiet_env() -> dict[str, str]:
    # The test machine sets PYTHONDONTWRITEBYTECODE, which makes setuptools say it skips
    # byte-compiling: a note about this machine, not about the package.
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """``pip wheel --no-deps .``: the wheel, and pip's and the build backend's output."""
    folder = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps", "-w", str(folder),
                            str(REPO)], capture_output=True, text=True, timeout=300, cwd=folder, env=_quiet_env())
    assert build.returncode == 0, build.stderr[-2000:]
    return next(folder.glob("jaxgrade-*.whl")), build.stdout + build.stderr


def test_wheel_and_editable_builds_print_no_warning(wheel, tmp_path):
    """``pip wheel .`` and ``pip install -e .`` (into a venv of their own), the backend's output
    included: no warning, setuptools' note on editable installs ("Please be careful with folders
    in your working directory...") included."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    editable = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                               "--verbose", "--no-deps", "-e", str(REPO)],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path, env=_quiet_env())
    assert editable.returncode == 0, editable.stderr[-2000:]
    for log in (wheel[1], editable.stdout + editable.stderr):
        assert "Successfully" in log
        assert not _warnings(log), "\n".join(_warnings(log)[:20])


def _wheel_installed(kind: str, wheel: Path, root: Path) -> tuple[list[str], dict[str, str]]:
    """The wheel installed with pip as ``kind`` says, beside its dependencies; the command that
    runs its grader there and that command's environment."""
    python = base_python_without_jax()
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "JAXGRADE_CACHE": os.environ["JAXGRADE_CACHE"]}
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    pip = [sys.executable, "-m", "pip"]
    if kind == "venv":
        subprocess.run([python, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
        dependencies_into(root / "lib" / version / "site-packages")
        pip += ["--python", str(root / "bin" / "python"), "install"]
        command = [str(root / "bin" / "jaxgrade")]
    elif kind == "user":
        env["PYTHONUSERBASE"] = str(root)
        dependencies_into(root / "lib" / version / "site-packages")
        pip += ["--python", python, "install", "--user"]
        command = [str(root / "bin" / "jaxgrade")]
    else:
        dependencies_into(root)
        env["PYTHONPATH"] = str(root)
        pip += ["install", "--target", str(root)]
        command = [python, "-m", "grader"]
    done = subprocess.run([*pip, "--no-deps", "--no-index", "--no-compile", str(wheel)], capture_output=True,
                          text=True, timeout=300, env={**_quiet_env(), **env})
    assert done.returncode == 0, done.stderr[-2000:]
    return command, env


@pytest.mark.parametrize("kind", ["venv", "user", "target"])
def test_a_wheel_grades_a_lazy_import_with_full_marks_however_installed(wheel, kind, tmp_path):
    """The grader of a wheel installed into a venv, with ``--user`` or with ``--target`` and
    PYTHONPATH, by an interpreter that has no JAX of its own, in a folder that is not the
    checkout: a right solution that imports rich lazily (jax.debug.visualize_array_sharding)
    gets full marks. Its child finds rich where the grader found it: in the folder that holds
    the grader itself (a venv's site-packages, dropped with the grader's folder before #44), or
    one that ``python -I`` alone leaves out (the user site-packages, PYTHONPATH)."""
    command, env = _wheel_installed(kind, wheel[0], tmp_path / "install")
    (tmp_path / "student").mkdir()
    shutil.copy(VISUALIZES, tmp_path / "student" / "solution.py")
    done = subprocess.run([*command, "check", "solution.py", "-e", "named_sharding_replicated"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path / "student", env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Score: 10/10" in done.stdout and "CPU 0" in done.stdout  # rich drew the layout


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
