"""grader.source: which file of a submission is graded, the helper modules beside it, and
notebooks graded as the Python of their code cells, through every entry point: the library,
``jaxgrade check`` and ``jaxgrade grade``."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.errors import NotebookError
from grader.source import choose, notebook_python, prepare_folder

ROOT = Path(__file__).resolve().parent.parent
SLUG = "named_sharding_replicated"
HELPERS = '''import jax
import numpy as np
from jax.sharding import Mesh


def mesh_of_first(count):
    return Mesh(np.array(jax.devices()[:count]), ("data",))
'''
SOLUTION = '''import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec

from helpers import mesh_of_first


def replicated_sharding_value(x):
    placed = jax.device_put(x, NamedSharding(mesh_of_first(1), PartitionSpec()))
    return jnp.sum(placed)
'''


def notebook(*cells: str) -> bytes:
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_markdown_cell("# My solution"), *(nbformat.v4.new_code_cell(c) for c in cells)]
    return nbformat.writes(book).encode()


def test_magics_and_shell_lines_become_comments_and_are_listed() -> None:
    converted = notebook_python(notebook("!pip install jax\nimport math\nfiles = !ls", "%%bash\necho hi",
                                         "%%time\ny = math.pi", "if True:\n    %timeit y + 1"))
    compile(converted.text, "notebook", "exec")  # what is left is Python
    assert "import math" in converted.text and "y = math.pi" in converted.text
    assert not any(line.lstrip().startswith(("%", "!")) for line in converted.text.splitlines())
    assert [n.split(":")[0] for n in converted.notes] == ["cell 2", "cell 2", "cell 3", "cell 4", "cell 5"]
    with pytest.raises(NotebookError):
        notebook_python(b'{"cells": "not a notebook"}')


def test_old_notebooks_are_read_too() -> None:
    v3 = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "code", "input": ["x = 1\n", "y = x + 1"], "language": "python", "outputs": [],
         "metadata": {}}]}]}
    assert "y = x + 1" in notebook_python(json.dumps(v3).encode()).text


def test_the_file_that_defines_the_function_is_graded_and_the_others_are_helpers(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "main.py").write_text(SOLUTION)
    prepared, why = prepare_folder(tmp_path, "replicated_sharding_value", tmp_path)
    assert prepared is not None and prepared.path.name == "main.py", why
    assert [h.name for h in prepared.helpers] == ["helpers.py"]
    chosen, why = choose({tmp_path / "a.py": SOLUTION, tmp_path / "b.py": SOLUTION}, "replicated_sharding_value")
    assert chosen is None and "several files (a.py, b.py) define" in why
    chosen, why = choose({tmp_path / "a.py": HELPERS, tmp_path / "b.py": HELPERS}, "replicated_sharding_value")
    assert chosen is None and "none of the files" in why


def _check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grader", "check", str(path), "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_check_grades_a_solution_that_imports_its_own_helper_module(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "solution.py").write_text(SOLUTION)
    run = _check(tmp_path / "solution.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["score"] == 10


def test_check_grades_a_notebook_and_says_what_it_turned_into_comments(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "solution.ipynb").write_bytes(notebook("%matplotlib inline", SOLUTION, "!nvidia-smi"))
    run = subprocess.run([sys.executable, "-m", "grader", "check", str(tmp_path / "solution.ipynb"), "--format",
                          "md"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Score: 10/10" in run.stdout or "10/10" in run.stdout
    assert "%matplotlib inline" in run.stdout and "!nvidia-smi" in run.stdout  # the note names them
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    bad = _check(broken)
    assert bad.returncode == 2 and "not a notebook Jupyter can open" in bad.stderr


def test_a_class_grades_notebooks_and_helper_modules(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    (folder / "alice").mkdir(parents=True)
    (folder / "alice" / "helpers.py").write_text(HELPERS)
    (folder / "alice" / "main.py").write_text(SOLUTION)
    (folder / "bob").mkdir()
    (folder / "bob" / "helpers.py").write_text(HELPERS)
    (folder / "bob" / "work.ipynb").write_bytes(notebook("!pip list", SOLUTION))
    (folder / "carol.ipynb").write_bytes(notebook(SOLUTION.replace("from helpers import mesh_of_first\n", "")
                                                  .replace("mesh_of_first(1)", "jax.make_mesh((1,), ('data',), "
                                                           "devices=jax.devices()[:1])")))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "grader", "grade", str(folder), "-e", SLUG, "-o", str(out), "-j", "2"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = (out / "gradebook.csv").read_text()
    for student in ("alice", "bob", "carol"):
        record = json.loads((out / "students" / student / "result.json").read_text())
        assert record["report"]["score"] == 10, (student, record["report"]["checks"])
    assert "not graded" not in run.stdout or "0 entries not graded" in run.stdout, rows
