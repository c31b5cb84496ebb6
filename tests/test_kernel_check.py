"""grader.notebook.check: ``grader.check()`` in a notebook cell, run in a real IPython kernel
(ipykernel, driven by nbclient as Jupyter drives it). What the kernel ran is graded in the
sandboxed child, as ``jaxgrade check`` grades the saved notebook: the same checks, the same
score; what cannot be graded is one line in the cell."""
from __future__ import annotations

import re
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from browser import AXE, CHROMIUM, NO_AXE, NO_CHROMIUM, audit, notebook_page
from conftest import SEED_EXERCISE

pytestmark = pytest.mark.slow

SLUG = SEED_EXERCISE.name
REFERENCE = (SEED_EXERCISE / "reference.py").read_text()
DRAFT = "def replicated_sharding_value(x):\n    import jax.numpy as jnp\n    return jnp.sum(x)\n"


def run(tmp_path, *sources: str) -> nbformat.NotebookNode:
    """A notebook of ``sources`` run top to bottom in a fresh kernel (errors kept as outputs),
    saved as work.ipynb in ``tmp_path``."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.write(notebook, tmp_path / "work.ipynb")
    return notebook


def html_of(cell) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs if o.output_type == "execute_result")


def score_shown(cell) -> str:
    """The score line of the report the cell shows, as its words read ("Score 10 / 10 points")."""
    text = " ".join(re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", html_of(cell), flags=re.S)).split())
    found = re.search(r"Score (\d+ / \d+)", text)
    return found.group(1) if found else text[:300]


def error_lines(cell) -> list[str]:
    return [line for o in cell.outputs if o.output_type == "error" for line in o.traceback]


def test_the_check_cell_shows_the_score_jaxgrade_check_gives_the_saved_notebook(tmp_path):
    notebook = run(tmp_path, REFERENCE, "import grader\ngrader.check()")
    cli = subprocess.run([sys.executable, "-m", "grader", "check", str(tmp_path / "work.ipynb")],
                         capture_output=True, text=True, timeout=300)
    assert "Score: 10/10" in cli.stdout, cli.stdout + cli.stderr
    assert score_shown(notebook.cells[-1]) == "10 / 10" and "<script" not in html_of(notebook.cells[-1])


def test_the_definition_run_last_is_graded_not_the_draft_below_it(tmp_path):
    # the draft (sums x unplaced) runs first, the reference is run again after it: the kernel holds the reference
    notebook = run(tmp_path, DRAFT, REFERENCE, "import grader\ngrader.check('named_sharding_replicated')")
    assert score_shown(notebook.cells[-1]) == "10 / 10"
    notebook = run(tmp_path, REFERENCE, DRAFT, "import grader\ngrader.check('named_sharding_replicated')")
    assert score_shown(notebook.cells[-1]) in ("6 / 10", "7 / 10", "8 / 10", "9 / 10"), score_shown(notebook.cells[-1])


@pytest.mark.parametrize("cells, says", [
    (["import grader\ngrader.check()"], "no cell run so far defines an exercise's function"),
    (["x = 1", "import grader\ngrader.check('named_sharding_replicated')"],
     "no cell run so far defines replicated_sharding_value"),
    ([REFERENCE, "import grader\ngrader.check('named_sharding_replcated')"], "did you mean named_sharding_replicated"),
    ([REFERENCE, "def sharded_matmul(x, w):\n    return x @ w", "import grader\ngrader.check()"],
     "your cells define the functions of 2 exercises"),
])
def test_what_cannot_be_graded_is_one_line_in_the_cell(tmp_path, cells, says):
    notebook = run(tmp_path, *cells)
    lines = error_lines(notebook.cells[-1])
    assert len(lines) == 1 and lines[0].startswith("CheckCellError: ") and says in lines[0], lines


def test_outside_a_kernel_it_says_to_run_jaxgrade_check():
    found = subprocess.run([sys.executable, "-c", "import grader; grader.check()"], capture_output=True, text=True,
                           timeout=120)
    assert found.returncode != 0 and "outside one, run jaxgrade check YOUR_FILE" in found.stderr, found.stderr


def test_a_second_check_uses_the_child_the_first_left_ready_and_grades_alike(tmp_path):
    # each check times itself in the cell: the second's child had imported JAX while the student read
    timed = ("import time, grader\nstarted = time.monotonic()\nreport = grader.check()\n"
             "print(f'took {time.monotonic() - started:.3f}')\nreport")
    notebook = run(tmp_path, REFERENCE, timed, timed, "import grader\nprint(sorted(grader.notebook.check._KERNEL))")
    first, second = notebook.cells[1], notebook.cells[2]
    assert score_shown(first) == score_shown(second) == "10 / 10"
    said = "".join(o.get("text", "") for o in notebook.cells[3].outputs)
    assert "'spare'" in said, said  # the third check's child is waiting


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
@pytest.mark.skipif(not AXE.is_file(), reason=NO_AXE)
def test_the_report_the_kernel_shows_passes_axe_on_a_light_and_a_dark_notebook(tmp_path):
    # a failing report (the draft sums the unplaced x): its details are shown too
    notebook = run(tmp_path, DRAFT, "import grader\ngrader.check('named_sharding_replicated')")
    shown = html_of(notebook.cells[-1])
    assert shown and score_shown(notebook.cells[-1]) != "10 / 10"
    for background, colour in (("#ffffff", "#000000"), ("#111111", "#eeeeee")):
        found = audit(notebook_page(shown, background, colour), 390, tmp_path)
        assert found["violations"] == [], f"{background}: {found['violations']}"


def test_a_wrong_layout_is_drawn_in_the_cell(tmp_path):
    """The cell of a solution that replicates x over all eight devices, not the first one, shows
    the task's layout beside its own: tables whose captions and labels say it in words (and the
    text a plain console would show draws the same grids)."""
    wrong = (SEED_EXERCISE / "wrong" / "structure_all_devices.py").read_text()
    notebook = run(tmp_path, wrong, "import grader\ngrader.check('named_sharding_replicated')")
    shown = html_of(notebook.cells[-1])
    labels = re.findall(r'<figure class="layout scroll" tabindex="0" aria-label="([^"]*)"', shown)
    assert labels == ["What the task asks: an array of shape (7,) on Mesh(&#39;data&#39;: 1), P(): [0:7] on cpu:0.",
                      "What your code did: an array of shape (7,) on Mesh(&#39;data&#39;: 8), P(): "
                      "[0:7] on cpu:0,1,2,3,4,5,6,7."]
    plain = "".join(o.get("data", {}).get("text/plain", "") for o in notebook.cells[-1].outputs
                    if o.output_type == "execute_result")
    assert "What the task asks:" in plain and "│ cpu:0,1,2,3,4,5,6,7 │" in plain
    assert [o.output_type for o in notebook.cells[-1].outputs] == ["execute_result"]  # nothing rich showed itself
    if CHROMIUM is not None and AXE.is_file():
        for background, colour in (("#ffffff", "#000000"), ("#111111", "#eeeeee")):
            found = audit(notebook_page(shown, background, colour), 390, tmp_path)
            assert found["violations"] == [], f"{background}: {found['violations']}"
            assert found["scroll_width"] <= found["client_width"], found
