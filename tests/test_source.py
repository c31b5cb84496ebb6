"""grader.source: which file of a submission is graded, the helper modules beside it, and
notebooks graded as the Python of their code cells, through every entry point: the library,
``jaxgrade check`` and ``jaxgrade grade``."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.errors import NotebookError
from grader.notebook.convert import notebook_python, split_lines
from grader.source import choose, helpers_beside, left_behind, prepare_folder

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
                                         "%%time\ny = math.pi", "if True:\n    %timeit y + 1", "math.sqrt?\n??math"))
    compile(converted.text, "notebook", "exec")  # what is left is Python
    assert "import math" in converted.text and "y = math.pi" in converted.text
    assert not any(line.lstrip().startswith(("%", "!")) for line in converted.text.splitlines())
    assert [n.split(":")[0] for n in converted.notes] == ["cell 2", "cell 2", "cell 3", "cell 4", "cell 5", "cell 6",
                                                          "cell 6"]
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


@pytest.mark.slow
def test_check_grades_a_solution_that_imports_its_own_helper_module(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "solution.py").write_text(SOLUTION)
    run = _check(tmp_path / "solution.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["score"] == 10


ALICE = "import helpers\nfrom bob import replicated_sharding_value as bobs\n\n\ndef replicated_sharding_value(x):\n" \
        "    return bobs(x)\n"


def test_a_classmates_file_is_never_carried_as_a_helper(tmp_path: Path) -> None:
    """alice.py imports bob.py, which defines the graded function too: bob's is another
    submission, left behind (and named); alice's own helper module still travels."""
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "bob.py").write_text(SOLUTION)
    (tmp_path / "alice.py").write_text(ALICE)
    assert helpers_beside(tmp_path / "alice.py", "replicated_sharding_value") == (tmp_path / "helpers.py",)
    assert left_behind(tmp_path / "alice.py", "replicated_sharding_value") == (tmp_path / "bob.py",)
    assert helpers_beside(tmp_path / "alice.py") == (tmp_path / "bob.py", tmp_path / "helpers.py")  # no function: all
    run = _check(tmp_path / "alice.py")
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["score"] == 0
    load = next(c for c in report["checks"] if c["id"] == "load.function")
    assert "bob.py defines replicated_sharding_value too: another submission" in load["message"], load["message"]


@pytest.mark.slow
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


@pytest.mark.slow
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
    # A package beside the solution, a tests/ package and an __init__.py: copied as they are laid out.
    (folder / "erin" / "tools").mkdir(parents=True)
    (folder / "erin" / "tests").mkdir()
    (folder / "erin" / "__init__.py").write_text("")
    (folder / "erin" / "tests" / "__init__.py").write_text("")
    (folder / "erin" / "tests" / "solution.py").write_text("from ..solution import *\n")
    (folder / "erin" / "tools" / "__init__.py").write_text("from .meshes import mesh_of_first\n")
    (folder / "erin" / "tools" / "meshes.py").write_text(HELPERS)
    (folder / "erin" / "solution.py").write_text(SOLUTION.replace("from helpers import", "from tools import"))
    # A notebook whose cell source is a number is one not-graded row, never the end of the class.
    (folder / "dave.ipynb").write_text(json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "grader", "grade", str(folder), "-e", SLUG, "-o", str(out), "-j", "2"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = (out / "gradebook.csv").read_text()
    dave = next(line for line in rows.splitlines() if line.startswith("dave"))
    assert "cell 1's 'source' is a number" in dave, rows
    for student in ("alice", "bob", "carol", "erin"):
        record = json.loads((out / "students" / student / "result.json").read_text())
        assert record["report"]["score"] == 10, (student, record["report"]["checks"])
    assert "dave.ipynb" in run.stdout, run.stdout


# Notebooks as each tool writes them: the same two cells, in each tool's own shape.
STANDALONE = SOLUTION.replace("from helpers import mesh_of_first\n", "").replace(
    "mesh_of_first(1)", "jax.make_mesh((1,), ('data',), devices=jax.devices()[:1])")


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def colab(*cells: str) -> bytes:
    """As Google Colab saves a notebook: nbformat 4.0, a ``colab`` block, cell ids in metadata."""
    return json.dumps({"nbformat": 4, "nbformat_minor": 0, "metadata": {
        "colab": {"provenance": [], "gpuType": "T4"}, "kernelspec": {"name": "python3", "display_name": "Python 3"},
        "accelerator": "GPU"}, "cells": [
        {"cell_type": "code", "execution_count": None, "metadata": {"id": f"c{n}", "outputId": "x"},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["Mounted at /content/drive\n"]}],
         "source": _lines(cell)} for n, cell in enumerate(cells)]}).encode()


def vscode(*cells: str) -> bytes:
    """As VS Code's Jupyter extension saves one: nbformat 4.2, each source one string per line."""
    return json.dumps({"cells": [
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": _lines(cell)}
        for cell in cells], "metadata": {"language_info": {"name": "python"}, "orig_nbformat": 4,
                                         "vscode": {"interpreter": {"hash": "ab" * 32}}},
        "nbformat": 4, "nbformat_minor": 2}, indent=1).encode()


def nbformat3(*cells: str) -> bytes:
    return json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""}, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 1, "metadata": {}, "source": ["Solution"]},
        *({"cell_type": "code", "collapsed": False, "input": _lines(cell), "language": "python", "metadata": {},
           "outputs": []} for cell in cells)], "metadata": {}}]}).encode()


@pytest.mark.parametrize("write", [notebook, colab, vscode, nbformat3])
def test_every_tools_notebook_is_read_as_its_code_cells(write) -> None:
    converted = notebook_python(write("import math", "def area(r):\n    return math.pi * r ** 2"))
    namespace: dict = {}
    exec(compile(converted.text, "notebook", "exec"), namespace)
    assert namespace["area"](1.0) == pytest.approx(3.14159, rel=1e-4)


@pytest.mark.parametrize("document, says", [
    ({"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}, "cell 1's 'source' is a number"),
    ({"nbformat": 4, "cells": [{"cell_type": "code", "source": {"a": 1}}]}, "cell 1's 'source' is an object"),
    ({"nbformat": 4, "cells": [{"source": "x = 1"}]}, "cell 1 has no 'cell_type'"),
    ({"nbformat": 4, "cells": [{"cell_type": 7, "source": "x = 1"}]}, "cell 1's 'cell_type' is a number"),
    ({"nbformat": 4, "cells": [{"cell_type": "markdown", "source": "hi"}, {"cell_type": "code", "source": [
        "x = 1\n", None]}]}, "cell 2's source holds null"),
    ({"nbformat": 4, "cells": [{"cell_type": "code"}]}, "cell 1 has no 'source'"),
    ({"nbformat": 4, "cells": ["x = 1"]}, "cell 1 is text, not an object"),
    ({"nbformat": 4, "cells": {"0": {}}}, "the notebook's 'cells' is an object, not a list"),
    ({"nbformat": "4", "cells": []}, "its nbformat is text"),
    ({"nbformat": 2, "worksheets": []}, "nbformat 2; only 3 and 4"),
    ({"nbformat": 3, "worksheets": [{"cells": [{"cell_type": "code", "input": 3}]}]}, "cell 1's 'input' is a number"),
    ([1, 2], "a JSON a list, not an object"),
    ({"nbformat": 4, "cells": [{"cell_type": "code", "source": ["x = '\ud800'"]}]}, "holds a lone surrogate"),
])
def test_a_notebook_of_the_wrong_shape_is_refused_saying_which_field(document, says) -> None:
    with pytest.raises(NotebookError, match=re.escape(says)):
        notebook_python(json.dumps(document).encode())


def test_lines_split_where_pythons_tokenizer_splits_them() -> None:
    cell = ("import math\n# a comment with a line separator \u2028 and a form feed \f inside\n"
            "def area(r):\r\n    # \u2029 \x1c \x85 \v\n    return math.pi * r ** 2\r")
    converted = notebook_python(notebook(cell))
    assert split_lines("a\u2028b\fc\r\nd\re\nf") == ["a\u2028b\fc", "d", "e", "f"]
    namespace: dict = {}
    exec(compile(converted.text, "notebook", "exec"), namespace)
    assert namespace["area"](2.0) == pytest.approx(12.566, rel=1e-4)


COLAB_CELLS = ("from google.colab import drive\ndrive.mount('/content/drive')",
               "import jax\nimport jax.numpy as jnp\nimport matplotlib.pyplot as plt\n"
               "from jax.sharding import NamedSharding, PartitionSpec",
               STANDALONE.split("def ")[0].replace("import jax\n", "") + "SHOWN = 3\n",
               "def " + STANDALONE.split("def ", 1)[1],
               "x = jnp.arange(8.0)\nplt.plot(x, replicated_sharding_value(x) * x)\nplt.show()",
               "print(x)")


def test_cells_that_only_show_or_mount_are_left_out_and_listed() -> None:
    converted = notebook_python(colab(*COLAB_CELLS), "replicated_sharding_value")
    assert converted.notes == (
        "cell 1 skipped: imports google.colab, which the grader does not provide",
        "cell 2, line 3 skipped: imports matplotlib.pyplot, which the grader does not provide",
        "cell 5 skipped: uses plt, which needs matplotlib.pyplot, which the grader does not provide",
        "cell 6 skipped: uses x, which needs matplotlib.pyplot, which the grader does not provide")
    compile(converted.text, "notebook", "exec")
    # without the function to grade, nothing is judged: the notebook is all its cells
    assert notebook_python(colab(*COLAB_CELLS)).notes == ()
    # a module the student ships beside the notebook is theirs to import
    assert "cell 1" not in " ".join(notebook_python(colab(*COLAB_CELLS), "replicated_sharding_value",
                                                    frozenset({"google"})).notes)


def test_a_module_the_function_needs_stays_imported_so_loading_names_it() -> None:
    cells = ("import jax.numpy as jnp\nimport matplotlib.pyplot as plt",
             "def replicated_sharding_value(x):\n    plt.plot(x)\n    return jnp.sum(x)")
    converted = notebook_python(vscode(*cells), "replicated_sharding_value")
    assert converted.notes == () and "import matplotlib.pyplot as plt" in converted.text.splitlines()


def test_a_cell_calling_the_grader_is_left_out_wherever_the_grader_is_installed(monkeypatch) -> None:
    """``import grader`` with the imports and ``grader.check()`` in a cell of its own (not a check
    cell by itself): both left out, as from the checkout, also where children find the grader on
    their path, as they do in a wheel's site-packages (there the cell ran in every child, importing
    the grader's report stack, and was skipped when it failed: another note, and 0.4-2 s a check)."""
    import grader.notebook.convert as convert
    from grader.importpath import GRADER_FOLDER
    cells = ("import jax.numpy as jnp\nimport grader",
             "def replicated_sharding_value(x):\n    return jnp.sum(x)",
             "grader.check('named_sharding_replicated')")
    notes = ("cell 1, line 2 skipped: imports grader, which the grader does not provide",
             "cell 3 skipped: uses grader, which needs grader, which the grader does not provide")
    assert notebook_python(vscode(*cells), "replicated_sharding_value").notes == notes
    wheel_like = (GRADER_FOLDER, *convert._child_search_path())
    monkeypatch.setattr(convert, "_child_search_path", lambda: wheel_like)
    convert.grader_provides.cache_clear()
    try:
        assert notebook_python(vscode(*cells), "replicated_sharding_value").notes == notes
    finally:
        convert.grader_provides.cache_clear()


@pytest.mark.slow
def test_check_grades_a_colab_notebook_as_meant_and_names_a_missing_module(tmp_path: Path) -> None:
    (tmp_path / "colab.ipynb").write_bytes(colab(*COLAB_CELLS))
    run = subprocess.run([sys.executable, "-m", "grader", "check", str(tmp_path / "colab.ipynb"), "-e", SLUG,
                          "--format", "md"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0 and "10/10" in run.stdout, run.stdout + run.stderr
    assert "skipped: imports google.colab, which the grader does not provide" in run.stdout
    needs = COLAB_CELLS[3].replace("    return", "    plt.figure()\n    return")
    (tmp_path / "needs.ipynb").write_bytes(colab(*COLAB_CELLS[:3], needs))
    failed = _check(tmp_path / "needs.ipynb")
    report = json.loads(failed.stdout)
    load = next(c for c in report["checks"] if c["category"] == "load")
    assert report["score"] == 0 and load["status"] == "failed" and "matplotlib" in load["message"], load
    (tmp_path / "bad.ipynb").write_text(json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}))
    bad = _check(tmp_path / "bad.ipynb")
    assert bad.returncode == 2 and "cell 1's 'source' is a number" in bad.stderr, bad.stderr


def test_a_notebook_of_16_mib_of_magic_lines_costs_about_its_size(tmp_path: Path) -> None:
    """Parsing is bounded before it starts: the notebook is refused after one count of its bytes."""
    for name, source in (("lines", ["%\n"] * ((16 << 20) // 8 - 100)), ("text", "%\n" * ((16 << 20) // 3))):
        path = tmp_path / f"{name}.ipynb"
        path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": source}]}))
        probe = ("import resource, sys\nfrom pathlib import Path\nfrom grader.source import python_of\n"
                 "from grader.errors import NotebookError\ndata = Path(sys.argv[1]).read_bytes()\n"
                 "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
                 "try:\n    python_of(data, '.ipynb', 'f')\nexcept NotebookError as e:\n    print(e)\n"
                 "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)\n")
        run = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, cwd=ROOT,
                             timeout=120)
        message, grew = run.stdout.splitlines()
        assert "more than" in message, run.stdout + run.stderr
        assert int(grew) < 4 * path.stat().st_size, (name, int(grew) >> 20)


def test_check_copies_the_modules_a_solution_imports_with_their_package(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "solution.py").write_text("from ..solution import *\n")
    (tmp_path / "tools" / "__init__.py").write_text("from .meshes import mesh_of_first\n")
    (tmp_path / "tools" / "meshes.py").write_text(HELPERS)
    (tmp_path / "notes.py").write_text("raise SystemExit('never imported')\n")
    (tmp_path / "solution.py").write_text(SOLUTION.replace("from helpers import", "from tools import"))
    assert [p.relative_to(tmp_path).as_posix() for p in helpers_beside(tmp_path / "solution.py")] == [
        "tools/__init__.py", "tools/meshes.py"]
    run = _check(tmp_path / "solution.py")
    assert run.returncode == 0 and json.loads(run.stdout)["score"] == 10, run.stdout + run.stderr


def test_a_large_notebook_is_converted_without_parsing_it_in_the_grader(tmp_path: Path) -> None:
    """Syntax trees cost ~600 bytes a byte of code: a notebook of nearly 1 MiB of code that imports
    what the grader lacks is kept whole, with a note, at a few times its size."""
    path = tmp_path / "big.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "cells": [
        {"cell_type": "code", "source": "import matplotlib.pyplot as plt\n" + "a = b + c\n" * 100_000}]}))
    probe = ("import resource, sys\nfrom pathlib import Path\nfrom grader.source import python_of\n"
             "data = Path(sys.argv[1]).read_bytes()\nbefore = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
             "converted = python_of(data, '.ipynb', 'f')\nprint(converted.notes[-1])\n"
             "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)\n")
    run = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    note, grew = run.stdout.splitlines()
    assert note.startswith("cells were not judged"), run.stdout + run.stderr
    assert int(grew) < 8 * path.stat().st_size, int(grew) >> 20


FINAL = "def " + STANDALONE.split("def ", 1)[1]
DRAFT = FINAL.replace("jnp.sum(placed)", "jnp.mean(placed)")
IMPORTS = STANDALONE.split("def ")[0]


def counted(*cells: tuple[str, int | None]) -> bytes:
    """A notebook as Jupyter saves it after a session: each code cell with its execution count."""
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_markdown_cell("# My solution"),
                  *(nbformat.v4.new_code_cell(source, execution_count=count) for source, count in cells)]
    return nbformat.writes(book).encode()


def _table(text: str) -> list[tuple[int, bool, bool]]:
    from grader.child.cells import read_cells
    return [(c.number, c.needed, c.graded) for c in read_cells(text.encode()) or []]


def test_the_definition_run_last_is_graded_and_the_earlier_ones_named() -> None:
    function = "replicated_sharding_value"
    # the final version above, run last (In [4]); the draft below it ran before (In [2])
    converted = notebook_python(counted((IMPORTS, 1), (FINAL, 4), (DRAFT, 2)), function)
    assert converted.notes == ("said: replicated_sharding_value is defined in cells 3 (In [4]) and 4 (In [2]): cell "
                               "3's definition ran last (In [4]) and was graded, as your kernel held it; the other "
                               "ran before it.",)
    assert _table(converted.text) == [(2, True, False), (3, True, True), (4, False, False)]  # the draft: a demo now
    # the last in the file ran last: graded as before, and said, with no mark for the child
    converted = notebook_python(counted((IMPORTS, 1), (DRAFT, 2), (FINAL, 4)), function)
    assert "cell 4's definition ran last (In [4])" in converted.notes[0]
    assert _table(converted.text) == [(2, True, False), (3, False, False), (4, True, False)]
    # no counts (never run, or cleared): the last in the file, as Restart & Run All leaves it
    converted = notebook_python(counted((IMPORTS, None), (FINAL, None), (DRAFT, None)), function)
    assert converted.notes == ("said: replicated_sharding_value is defined in cells 3 and 4 and the notebook shows "
                               "no execution counts: cell 4's definition, the last, was graded, as Restart & Run All "
                               "leaves it.",)
    assert _table(converted.text)[-1] == (4, True, False)
    # a definition without a count among counted cells: not run since, or cleared; graded as saved
    converted = notebook_python(counted((IMPORTS, 1), (DRAFT, None), ("print(1)", 2)), function)
    assert converted.notes == ("said: Cell 3, which defines replicated_sharding_value, shows no execution count while "
                               "other cells do: not run since, or cleared. Cell 3's code as saved was graded; run it, "
                               "save, and check again if that is not your final version.",)
    converted = notebook_python(counted((IMPORTS, 1), (FINAL, None), (DRAFT, None)), function)
    assert converted.notes[0].startswith("said: Cells 3 and 4, which define replicated_sharding_value, show no "
                                         "execution count while other cells do: not run since, or cleared. Cell 4's")
    # ...and a counted definition wins over one that shows no count, which is named
    converted = notebook_python(counted((IMPORTS, 1), (FINAL, 2), (DRAFT, None)), function)
    assert "cells 3 (In [2]) and 4 (not run): cell 3's definition ran last (In [2]) and was graded, as your kernel " \
           "held it; any other ran before it or not at all." in converted.notes[0]
    assert _table(converted.text)[1:] == [(3, True, True), (4, False, False)]
    # one definition, run: nothing to say
    assert notebook_python(counted((IMPORTS, 1), (FINAL, 2)), function).notes == ()


@pytest.mark.slow
def test_check_grades_the_version_the_kernel_ran_last(tmp_path: Path) -> None:
    """Through jaxgrade check, for real: the final version above a draft run before it gets full
    marks and the report names both cells; the same cells run the other way round grade the draft."""
    final_last = tmp_path / "final_last.ipynb"
    final_last.write_bytes(counted((IMPORTS, 1), (FINAL, 4), (DRAFT, 2), ("print(replicated_sharding_value("
                                                                          "jnp.ones(3)))", 5)))
    run = subprocess.run([sys.executable, "-m", "grader", "check", str(final_last), "-e", SLUG], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0 and "Score: 10/10" in run.stdout, run.stdout + run.stderr
    assert "cells 3 (In [4]) and 4 (In [2]): cell 3's definition ran last (In [4]) and was graded" in \
        " ".join(run.stdout.split())
    draft_last = tmp_path / "draft_last.ipynb"
    draft_last.write_bytes(counted((IMPORTS, 1), (FINAL, 2), (DRAFT, 4)))
    report = json.loads(_check(draft_last).stdout)
    assert report["score"] < report["max_score"], report
    values = [c for c in report["checks"] if c["category"] == "value"]
    assert any(c["status"] == "failed" for c in values), values


@pytest.mark.parametrize("cell", ["import grader\ngrader.check()", "import grader\ngrader.check('lab3')",
                                  "from grader import check\ncheck()", "from grader import check\nprint(check())",
                                  "import grader as g\nresult = g.check('lab3')\nresult", "import grader",
                                  # the check cell of jaxgrade start --notebook, and of a student's folder
                                  "!jaxgrade check work.ipynb -e named_sharding_replicated",
                                  "# Check your work\n!python check work.ipynb", "!python -m grader check work.ipynb"])
def test_the_check_cell_is_left_out_as_the_check_not_an_unknown_import(cell: str) -> None:
    converted = notebook_python(counted((IMPORTS, 1), (FINAL, 2), (cell, 3)), "replicated_sharding_value")
    assert converted.notes == ("cell 4 skipped: the check cell (jaxgrade check runs the checks itself)",)
    assert "does not provide" not in " ".join(converted.notes)
    compile(converted.text, "notebook", "exec")
    assert [c.number for c in __import__("grader.child.cells").child.cells.read_cells(converted.text.encode())] \
        == [2, 3]  # it is not run


def test_a_cell_that_does_more_than_check_is_no_check_cell() -> None:
    converted = notebook_python(counted((IMPORTS, 1), (FINAL, 2), ("import grader\nx = 1\ngrader.check()", 3)),
                                "replicated_sharding_value")
    assert converted.notes == ("cell 4 skipped: imports grader, which the grader does not provide",)
    shell = notebook_python(counted((IMPORTS, 1), (FINAL, 2), ("!jaxgrade check work.ipynb\n!ls", 3)),
                            "replicated_sharding_value")
    assert shell.notes == ("cell 4: !jaxgrade check work.ipynb", "cell 4: !ls")  # IPython lines, not the check
    # a module of the student's own named grader is theirs
    assert notebook_python(counted((FINAL, 1), ("import grader\ngrader.check()", 2)), "replicated_sharding_value",
                           frozenset({"grader"})).notes == ()


def test_a_check_run_before_the_function_was_defined_is_one_line() -> None:
    converted = notebook_python(counted((IMPORTS, 1), ("from grader import check\ncheck()", 2), (FINAL, 3)),
                                "replicated_sharding_value")
    assert converted.notes[0] == ("said: Cell 3, the check cell, ran before cell 4 defined replicated_sharding_value: "
                                  "in Jupyter, run the check after the definition (jaxgrade check grades the whole "
                                  "notebook either way).")
    # by execution counts: the check below the definition, but run before it
    converted = notebook_python(counted((IMPORTS, 1), (FINAL, 5), ("import grader\ngrader.check()", 3)),
                                "replicated_sharding_value")
    assert converted.notes[0].startswith("said: Cell 4, the check cell, ran before cell 3 defined")
    # run after it: nothing said but the check cell's being left out
    converted = notebook_python(counted((IMPORTS, 1), (FINAL, 2), ("import grader\ngrader.check()", 3)),
                                "replicated_sharding_value")
    assert not any(note.startswith("said:") for note in converted.notes)
