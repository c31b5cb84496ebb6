"""The student's loop gives the same points everywhere (issue #58 point 4): one file, graded as
``jaxgrade check`` grades it (JSON), as ``pytest`` with the plugin grades it (JUnit properties),
as ``grader.check()`` grades the same code run in a real IPython kernel (nbclient, as Jupyter
drives it), and as the exported GitHub Classroom workflow's grading step grades it (its command
run here in bash, its result decoded as the reporter decodes it): each check's points and the
total are the same in all four, for a right and a wrong solution."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import SEED_EXERCISE
from grader.authoring.exercise import find_exercise
from grader.authoring.export import export_github_classroom
from test_export import _shell, _workflow
from test_pytest_plugin import _junit_points
from test_render import classroom_reporter_reads, points_per_check, step_outputs

pytestmark = pytest.mark.slow  # eight gradings, a kernel and a pytest per solution

SLUG = "named_sharding_replicated"
Points = dict[str, float]


def by_check(report: dict) -> Points:
    return {check["id"]: check["score"] for check in report["checks"]}


def jaxgrade_check(folder: Path) -> Points:
    done = subprocess.run([sys.executable, "-m", "grader", "check", "solution.py", "-e", SLUG, "--format", "json"],
                          capture_output=True, text=True, timeout=300, cwd=folder)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return by_check(json.loads(done.stdout))


def pytest_plugin(folder: Path) -> Points:
    done = subprocess.run([sys.executable, "-m", "pytest", "--jaxgrade", f"solution.py::{SLUG}", "-p",
                           "no:cacheprovider", "-q", "--junitxml=junit.xml"],
                          capture_output=True, text=True, timeout=300, cwd=folder)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    return {name: points for name, (points, _) in _junit_points(folder / "junit.xml").items()}


def notebook_check(folder: Path) -> Points:
    """The solution's code run as a notebook's cell in a real kernel, then ``grader.check()``."""
    cells = [(folder / "solution.py").read_text(),
             f"import json, grader\nreport = grader.check({SLUG!r})\n"
             "json.dump(report.as_data(), open('kernel.json', 'w'))"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    kernel = folder / "kernel"
    kernel.mkdir()
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(kernel)}}).execute()
    return by_check(json.loads((kernel / "kernel.json").read_text()))


def classroom_job(repository: Path, solution: Path, scratch: Path) -> Points:
    """The exported workflow's grading step in a copy of the repository holding ``solution``."""
    shutil.copy(solution, repository / f"{SLUG}.py")
    output = scratch / "output"
    output.write_text("")
    steps = _workflow(repository)["jobs"]["run-autograding-tests"]["steps"]
    grading = next(s for s in steps if s.get("id") == "jaxgrade")
    done = _shell(grading["run"], repository, GITHUB_OUTPUT=str(output),
                  GITHUB_STEP_SUMMARY=str(scratch / "summary.md"))
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    read = classroom_reporter_reads("jaxgrade", {"JAXGRADE_RESULTS": step_outputs(output.read_text())["result"]})
    assert read["points"][0] == sum(points_per_check(read["results"][0]).values())
    return points_per_check(read["results"][0])


@pytest.fixture(scope="module")
def classroom(tmp_path_factory) -> Path:
    return export_github_classroom(find_exercise(SLUG), tmp_path_factory.mktemp("classroom") / SLUG)


@pytest.mark.parametrize("variant, full", [("right/jitted.py", True), ("wrong/value_skips_first.py", False)])
def test_check_pytest_notebook_and_classroom_give_the_same_points_per_check(classroom, tmp_path, variant, full):
    solution = SEED_EXERCISE / variant
    folder = tmp_path / "student"
    folder.mkdir()
    shutil.copy(solution, folder / "solution.py")
    repository = tmp_path / "repository"
    shutil.copytree(classroom, repository, symlinks=True)

    checked = jaxgrade_check(folder)
    graded = {"pytest": pytest_plugin(folder), "notebook": notebook_check(folder),
              "classroom": classroom_job(repository, solution, tmp_path)}
    points = find_exercise(SLUG).points
    assert set(checked) == set(points)
    assert (sum(checked.values()) == sum(points.values())) == full  # the wrong one loses points, so a difference would show
    for way, given in graded.items():
        assert given == checked, f"{way} gave {given}, jaxgrade check {checked}"
