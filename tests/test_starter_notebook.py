"""The starter notebook (grader.authoring.starter): ``jaxgrade start SLUG --notebook`` and the student's
folder of ``jaxgrade export student`` write a valid nbformat 4 notebook (the statement, the
starter code, a check cell), and the command its check cell runs grades the saved notebook."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat

from conftest import REPO
from grader.authoring.exercise import find_exercise
from grader.authoring.export import export_student

SLUG = "named_sharding_replicated"
EXERCISE = REPO / "exercises" / SLUG


def _jaxgrade(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def _cells(path: Path) -> list[tuple[str, str]]:
    book = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    assert book.nbformat == 4
    nbformat.validate(book)
    return [(cell.cell_type, cell.source) for cell in book.cells]


def test_start_writes_a_notebook_whose_check_cell_grades_it(tmp_path: Path) -> None:
    written = _jaxgrade("start", SLUG, "--notebook", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    path = tmp_path / f"{SLUG}.ipynb"
    cells = _cells(path)
    assert [kind for kind, _ in cells] == ["markdown", "code", "markdown", "code"]
    assert cells[0][1] == (EXERCISE / "statement.md").read_text().strip("\n")
    starter = (EXERCISE / "starter.py").read_text()
    assert cells[1][1] == starter[starter.index("import jax"):].strip("\n")  # the code, the docstring is cell 1
    assert "Save the notebook first" in cells[2][1]
    assert cells[3][1] == f"!jaxgrade check {SLUG}.ipynb -e {SLUG}"
    # The check cell's command, run as Jupyter runs a shell line: the starter is graded, not a crash.
    env = {**os.environ, "NO_COLOR": "1", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    checked = subprocess.run([*shlex.split(cells[3][1][1:]), "--format", "json"], capture_output=True, text=True,
                             cwd=tmp_path, env=env, timeout=300)
    assert checked.returncode == 1, checked.stderr
    report = json.loads(checked.stdout)
    assert report["exercise"] == SLUG and report["status"] == "failed" and report["submission"]["path"] == path.name
    load = next(c for c in report["checks"] if c["id"] == "load.function")
    assert load["status"] == "passed"
    assert any("NotImplementedError" in c["message"] for c in report["checks"] if c["status"] == "failed")
    # The check cell is known as such: left out with the mild note, not listed among IPython lines.
    text = _jaxgrade("check", path.name, cwd=tmp_path).stdout
    assert "the check cell (jaxgrade check runs the checks itself)" in text and "!jaxgrade" not in text
    # Solved in the notebook (the code cell replaced by the reference), the same check gives full marks.
    book = nbformat.read(str(path), as_version=4)
    book.cells[1].source = (EXERCISE / "reference.py").read_text()
    nbformat.write(book, str(path))
    solved = subprocess.run(shlex.split(cells[3][1][1:]), capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=300)
    assert solved.returncode == 0 and "Score: 10/10" in solved.stdout, solved.stdout + solved.stderr


def test_start_notebook_refuses_to_overwrite_or_to_misname(tmp_path: Path) -> None:
    (tmp_path / "mine.ipynb").write_text("{}")
    again = _jaxgrade("start", SLUG, "--notebook", "-o", "mine.ipynb", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr and (tmp_path / "mine.ipynb").read_text() == "{}"
    misnamed = _jaxgrade("start", SLUG, "--notebook", "-o", "mine.py", cwd=tmp_path)
    assert misnamed.returncode == 2 and "-o mine.ipynb" in misnamed.stderr and not (tmp_path / "mine.py").exists()
    assert len(misnamed.stderr.strip().splitlines()) == 1


def test_the_student_folder_has_the_notebook_checked_by_its_own_script(tmp_path: Path) -> None:
    out = export_student(find_exercise(SLUG), tmp_path / "student")
    cells = _cells(out / f"{SLUG}.ipynb")
    assert [kind for kind, _ in cells] == ["markdown", "code", "markdown", "code"]
    assert cells[3][1] == f"!python check {SLUG}.ipynb"
    env = {k: v for k, v in os.environ.items() if k != "JAXGRADE_EXERCISES"}
    checked = subprocess.run([sys.executable, "check", f"{SLUG}.ipynb"], cwd=out, env=env, capture_output=True,
                             text=True, timeout=300)
    assert checked.returncode == 1 and "Score: 2/10" in checked.stdout, checked.stdout + checked.stderr
    assert "the check cell (jaxgrade check runs the checks itself)" in checked.stdout
