"""The library takes what ``jaxgrade check`` takes (grader.submission): ``grader.grade`` grades a
``.py`` file, a notebook converted as the command converts it, and a folder of one student's
files, and refuses what it cannot grade with the command's own one-line messages. Real files,
real gradings, and the command itself to compare with."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import grader
from grader.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
SLUG = "named_sharding_replicated"
REFERENCE = (ROOT / "exercises" / SLUG / "reference.py").read_text()
WRONG = (ROOT / "exercises" / SLUG / "wrong" / "value_skips_first.py").read_text()
HELPERS = "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n\n\ndef mesh_of_first(count):\n" \
          "    return Mesh(np.array(jax.devices()[:count]), ('data',))\n"
SOLUTION = "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec\n\n" \
           "from helpers import mesh_of_first\n\n\ndef replicated_sharding_value(x):\n" \
           "    placed = jax.device_put(x, NamedSharding(mesh_of_first(1), PartitionSpec()))\n" \
           "    return jnp.sum(placed)\n"


def _notebook(path: Path, *cells: str) -> Path:
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_markdown_cell("# My solution"), *(nbformat.v4.new_code_cell(c) for c in cells)]
    nbformat.write(book, str(path))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "check", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


@pytest.fixture(scope="module")
def exercise():
    return grader.find_exercise(SLUG)


def test_a_notebook_is_graded_as_the_command_grades_it(exercise, tmp_path: Path) -> None:
    """It used to be read as Python ("NameError: name 'null' is not defined")."""
    (tmp_path / "helpers.py").write_text(HELPERS)
    book = _notebook(tmp_path / "solution.ipynb", "%matplotlib inline", SOLUTION, "!nvidia-smi")
    report = grader.grade(exercise, book)
    assert report.status == "passed" and report.score == report.max_score == 10, str(report)
    assert report.submission["path"] == str(book)
    assert "%matplotlib inline" in str(report) and "!nvidia-smi" in str(report)  # the notes, as the CLI says them
    command = _cli(str(book), "-e", SLUG, "--format", "json")
    assert command.returncode == 0, command.stderr
    cli = json.loads(command.stdout)
    assert [(c["id"], c["status"], c["message"]) for c in cli["checks"]] == \
        [(c.id, c.status, c.message) for c in report.checks]


def test_a_python_file_is_graded_with_its_helper_module(exercise, tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "solution.py").write_text(SOLUTION)
    assert grader.grade(exercise, tmp_path / "solution.py").score == 10
    (tmp_path / "wrong.py").write_text(WRONG)
    failed = grader.grade(exercise, str(tmp_path / "wrong.py"))  # a str is a path too
    assert failed.status == "failed" and failed.score == 7


def test_a_folder_of_one_students_files_is_graded_as_the_autograders_choose(exercise, tmp_path: Path) -> None:
    folder = tmp_path / "alice"
    folder.mkdir()
    (folder / "helpers.py").write_text(HELPERS)
    _notebook(folder / "work.ipynb", SOLUTION)
    (folder / ".ipynb_checkpoints").mkdir()
    _notebook(folder / ".ipynb_checkpoints" / "work-checkpoint.ipynb", WRONG)  # Jupyter's copy is not the work
    report = grader.grade(exercise, folder)
    assert report.score == 10 and report.submission["path"] == str(folder / "work.ipynb"), str(report)


def _cli_message(*args: str) -> str:
    command = _cli(*args)
    assert command.returncode == 2 and len(command.stderr.strip().splitlines()) == 1, command.stderr
    return command.stderr.strip().removeprefix("jaxgrade: ")


def test_what_cannot_be_graded_is_refused_with_the_commands_words(exercise, tmp_path: Path) -> None:
    missing = tmp_path / "missing.ipynb"
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    for path in (missing, broken):
        with pytest.raises(UsageError) as refused:
            grader.grade(exercise, path)
        assert str(refused.value) == _cli_message(str(path), "-e", SLUG)
    assert "no such file" in _cli_message(str(missing), "-e", SLUG)
    assert "save it again from Jupyter" in _cli_message(str(broken), "-e", SLUG)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no code here")
    with pytest.raises(UsageError, match=r"cannot grade the folder .*empty: No Python file was submitted"):
        grader.grade(exercise, empty)
    both = tmp_path / "both"
    both.mkdir()
    (both / "one.py").write_text(WRONG)
    (both / "two.py").write_text(REFERENCE)
    with pytest.raises(UsageError, match=r"cannot tell which is your solution: several files \(one.py, two.py\)"):
        grader.grade(exercise, both)
