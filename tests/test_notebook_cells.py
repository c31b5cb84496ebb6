"""grader.child.cells: a notebook runs cell by cell in the sandboxed child, as Jupyter's Run All
runs it, a cell the graded function does not need skipped (and listed) when it fails as it
runs, a needed one failing the load by its number. Through ``jaxgrade check`` and the library
on real notebooks, graded for real."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from grader.engine import grade
from grader.child.cells import Cell, cells_line, read_cells
from grader.source import python_of

FUNCTION = "replicated_sharding_value"
IMPORTS = "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec"
DEFINITION = '''def replicated_sharding_value(x):
    mesh = jax.make_mesh((1,), ("data",), devices=jax.devices()[:1])
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec()))) * SCALE'''
WRONG = DEFINITION.replace("jnp.sum(", "jnp.mean(")


def colab(*cells: str) -> bytes:
    """As Google Colab saves a notebook: a markdown cell first (cells are numbered as Jupyter shows them)."""
    return json.dumps({"nbformat": 4, "nbformat_minor": 0, "metadata": {"colab": {"provenance": []}}, "cells": [
        {"cell_type": "markdown", "metadata": {"id": "title"}, "source": ["# Lab 3"]},
        *({"cell_type": "code", "execution_count": None, "metadata": {"id": f"c{n}"}, "outputs": [],
           "source": cell.splitlines(keepends=True)} for n, cell in enumerate(cells))]}).encode()


def graded(seed_exercise, tmp_path: Path, *cells: str, **options):
    """The library's grade of the notebook, converted as every entry point converts it."""
    notebook = tmp_path / "lab.ipynb"
    notebook.write_bytes(colab(*cells))
    converted = python_of(notebook.read_bytes(), ".ipynb", FUNCTION)
    path = tmp_path / "lab.py"
    path.write_text(converted.text)
    return grade(seed_exercise, path, display_path=str(notebook), notes=converted.notes, **options), converted.text


def load_check(report):
    return next(c for c in report.checks if c.category == "load")


@pytest.mark.slow
def test_a_colab_notebook_whose_demo_cells_fail_gets_full_marks_and_lists_them(tmp_path: Path) -> None:
    cells = ("from google.colab import drive\ndrive.mount('/content/drive')",
             f"from __future__ import annotations\n{IMPORTS}\nSCALE = 1.0",
             DEFINITION,
             "import numpy as np\nframe = np.loadtxt('data.csv')",  # numpy is there: the file is not
             "table = open('data.csv').read()\nprint(table)",
             "replicated_sharding_value(jnp.ones(3), 'a bad demo input')",
             "def shown(x: NotDefinedUntilCalled) -> None:\n    print(x)",  # annotations stay lazy in every cell
             "import sys\nprint('done')\nsys.exit(0)",
             "print(replicated_sharding_value(jnp.arange(4.0)))")
    (tmp_path / "lab.ipynb").write_bytes(colab(*cells))
    run = subprocess.run([sys.executable, "-m", "grader", "check", str(tmp_path / "lab.ipynb"), "-e",
                          "named_sharding_replicated"], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0 and "Score: 10/10" in run.stdout, run.stdout + run.stderr
    note = " ".join(run.stdout.split())  # the note as one line, however the terminal wrapped it
    assert "cell 2 skipped: imports google.colab, which the grader does not provide" in note
    assert "cell 5 skipped: its line 2 raised FileNotFoundError: data.csv not found." in note
    assert "cell 6 skipped: its line 1 raised FileNotFoundError: [Errno 2] No such file or directory: " \
           "'data.csv'" in note
    assert "cell 7 skipped: its line 1 raised TypeError: replicated_sharding_value() takes 1 positional argument " \
           "but 2 were given" in note
    assert "cell 9 skipped: its line 3 raised SystemExit: 0" in note
    assert "cell 8" not in note and "cell 10" not in note  # they ran: the cells after a failed one run too
    assert "6.0" in run.stdout and "done" in run.stdout


def test_a_needed_cell_that_fails_fails_the_load_naming_the_cell(seed_exercise, tmp_path: Path) -> None:
    report, text = graded(seed_exercise, tmp_path, IMPORTS, "SCALE = float(open('scale.txt').read())", DEFINITION,
                          "print('never graded')")
    load = load_check(report)
    assert report.score == 0 and load.status == "failed", load
    assert load.message.startswith("Cell 3 of your notebook raised an error, and your function needs that cell")
    # the traceback's line is the converted file's, where that statement is
    line = text.splitlines().index("SCALE = float(open('scale.txt').read())") + 1
    assert f"FileNotFoundError: [Errno 2] No such file or directory: 'scale.txt'\n  lab.py, line {line}, in " \
           "<module>" in load.message
    assert all(c.status == "skipped" for c in report.checks if c is not load)


def test_a_cell_that_defines_what_the_function_reads_later_is_needed(seed_exercise, tmp_path: Path) -> None:
    """A constant set after the definition is read when the function runs: its cell is needed."""
    report, _ = graded(seed_exercise, tmp_path, IMPORTS, DEFINITION, "SCALE = float(open('scale.txt').read())")
    load = load_check(report)
    assert report.score == 0 and "Cell 4 of your notebook raised an error" in load.message, load


@pytest.mark.slow
def test_a_failing_cell_cannot_make_a_wrong_solution_right(seed_exercise, tmp_path: Path) -> None:
    # The last definition is the one graded, whatever fails after it in its cell...
    report, _ = graded(seed_exercise, tmp_path, f"{IMPORTS}\nSCALE = 1.0", DEFINITION,
                       f"{WRONG}\n\nraise RuntimeError('demo')")
    assert report.score == 0 and "Cell 4 of your notebook raised an error" in load_check(report).message
    # ...and a skipped demo leaves a wrong function as wrong as it was.
    report, _ = graded(seed_exercise, tmp_path, f"{IMPORTS}\nSCALE = 1.0", WRONG, "open('data.csv')")
    values = [c for c in report.checks if c.category == "value"]
    assert load_check(report).status == "passed" and any(c.status == "failed" for c in values), report.checks
    assert "cell 4 skipped: its line 1 raised FileNotFoundError" in load_check(report).advisory


@pytest.mark.slow
def test_an_interrupt_or_exit_of_the_process_in_a_demo_cell_stops_the_notebook(seed_exercise, tmp_path: Path) -> None:
    solution = (f"{IMPORTS}\nSCALE = 1.0", DEFINITION)
    report, _ = graded(seed_exercise, tmp_path, *solution, "raise KeyboardInterrupt")
    assert "Cell 4 of your notebook raised KeyboardInterrupt, which stops the whole notebook" in \
        load_check(report).message
    report, _ = graded(seed_exercise, tmp_path, *solution, "import os\nos._exit(3)")
    assert report.score == 0 and "while importing your file" in load_check(report).message, load_check(report)


@pytest.mark.slow
def test_a_demo_cell_that_hangs_is_skipped_and_named_within_its_share_of_the_load_limit(seed_exercise,
                                                                                       tmp_path: Path) -> None:
    """Cells the function does not need have half the import's time in all, each at most half
    of what is left: a spinning demo is interrupted and skipped, the quick demo after it runs, a
    sleeping one is interrupted too; the function is graded."""
    limits = dataclasses.replace(seed_exercise.limits, call_s=4.0)
    report, _ = graded(seed_exercise, tmp_path, f"{IMPORTS}\nSCALE = 1.0", DEFINITION, "while True:\n    pass",
                       "print('ran')", "import time\ntime.sleep(600)", limits=limits)
    load = load_check(report)
    assert load.status == "passed" and report.score == report.max_score, load
    advisory = " ".join(load.advisory.split())
    assert "cell 4 skipped: it did not finish within 1 s (half the time left to the cells your function does not " \
           "need, 2 s in all); cell 6 skipped: it did not finish within 0." in advisory, advisory
    assert "cell 5" not in advisory


@pytest.mark.slow
def test_a_demo_cell_that_catches_the_interruption_is_stopped_by_the_load_limit(seed_exercise, tmp_path: Path) -> None:
    limits = dataclasses.replace(seed_exercise.limits, call_s=2.0)
    stubborn = "import time\nwhile True:\n    try:\n        time.sleep(1)\n    except BaseException:\n        pass"
    report, _ = graded(seed_exercise, tmp_path, f"{IMPORTS}\nSCALE = 1.0", DEFINITION, stubborn, limits=limits)
    assert load_check(report).message == ("Your file could not be imported: your code did not finish within 2 s (the "
                                          "limit for one call) while importing your file.")


def test_a_python_file_runs_whole_as_before(seed_exercise, tmp_path: Path) -> None:
    path = tmp_path / "lab.py"
    path.write_text(f"{IMPORTS}\nSCALE = 1.0\n\n\n{DEFINITION}\n\n\nopen('data.csv')\n")
    assert python_of(path.read_bytes(), ".py", FUNCTION).text == path.read_text()  # no table added
    load = load_check(grade(seed_exercise, path))
    assert load.message.startswith("Importing your file raised an error") and "data.csv" in load.message


def test_the_table_is_read_back_only_from_a_files_last_line() -> None:
    cells = [Cell(2, 1, True), Cell(4, 6, False), Cell(5, 8, True, graded=True)]
    text = f"x = 1\n\n# In[4]:\ny = 2\n\n# In[5]:\nz = 3\n{cells_line(cells)}\n"
    assert cells_line(cells).endswith(" 2@1 4@6* 5@8!")
    assert read_cells(text.encode()) == cells
    assert read_cells(f"{cells_line(cells)}\nx = 1\n".encode()) is None
    assert read_cells(b"x = 1\n") is None


def test_which_cells_the_function_needs_is_judged_from_their_syntax() -> None:
    """The table the conversion writes: the definition, what it reads (a constant set after it
    too), a star import (what it binds is unknown) and the cells those read are needed."""
    converted = python_of(colab("from math import *", "import numpy as np\nBASE = np.float32(2)",
                                "def replicated_sharding_value(x):\n    return sqrt(x) * K",
                                "K = BASE * 2", "print(replicated_sharding_value(4.0))", "print(BASE)", ""),
                          ".ipynb", FUNCTION)
    cells = read_cells(converted.text.encode())
    assert [(c.number, c.needed) for c in cells] == [(2, True), (3, True), (4, True), (5, True), (6, False),
                                                     (7, False), (8, True)]
    lines = converted.text.splitlines()
    assert all(lines[c.first_line - 1] == f"# In[{c.number}]:" for c in cells)
    assert read_cells(python_of(colab("x = 1"), ".ipynb").text.encode()) is None  # no function: nothing judged


def test_a_missing_function_is_reported_with_the_cells_that_were_skipped(seed_exercise, tmp_path: Path) -> None:
    """The function may be missing because a skipped cell was to define it: the failure says
    which cells did not run (the first 20 described, the rest counted)."""
    demos = [f"raise ValueError('demo {n}')" for n in range(25)]
    report, _ = graded(seed_exercise, tmp_path, IMPORTS, DEFINITION.replace("def replicated_sharding_value",
                                                                            "def my_sum"), *demos)
    load = load_check(report)
    assert load.message.startswith("Your file does not define a function named replicated_sharding_value.")
    assert "Skipped because they failed (your function does not need them): cell 4 skipped: its line 1 raised " \
           "ValueError: demo 0; cell 5 skipped" in load.message
    assert "cell 23 skipped: its line 1 raised ValueError: demo 19; and 5 more." in load.message
