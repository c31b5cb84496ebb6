"""A child imports JAX, the grader and their dependencies from the folders where the grader's
process found them: a PYTHONPATH install grades like a venv, and nothing else of the grader's
path (its current folder, a folder holding a file named like a module) reaches a child."""
from __future__ import annotations

import json
import os
import subprocess
import sysconfig

import pytest

from conftest import REPO, base_python_without_jax, dependencies_into

SITE_PACKAGES = sysconfig.get_paths()["purelib"]  # this venv's: jax, rich and the rest
SOLUTION = REPO / "tests" / "data" / "visualizes_its_layout.py"
# A file beside the submission named like what JAX imports lazily: if the child ever imported
# it, visualize_array_sharding would fail and the solution would lose marks.
SHADOW = 'raise ImportError("the rich.py beside the submission was imported in place of rich")\n'


def _pythonpath_env(*folders: str) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(folders), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "JAXGRADE_NO_DAEMON": "1",
            "JAXGRADE_CACHE": os.environ["JAXGRADE_CACHE"]}


def test_the_folders_a_child_needs_are_those_holding_dependencies_in_the_parents_order(tmp_path):
    python = base_python_without_jax()
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "rich.py").write_text(SHADOW)
    probe = "import json; from grader.importpath import dependency_folders as d; print(json.dumps(d()))"
    shown = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                           env=_pythonpath_env(str(stray), SITE_PACKAGES, str(REPO)))
    assert shown.returncode == 0, shown.stderr
    order, needed = json.loads(shown.stdout)
    site = os.path.realpath(SITE_PACKAGES)
    assert needed == [site], needed  # not the stray folder, the checkout (grader only) or the current folder
    assert order.index(os.path.realpath(stray)) < order.index(site) < order.index(os.path.realpath(REPO))


@pytest.mark.parametrize("folder", ["site-packages", "links"])
def test_a_pythonpath_install_grades_a_lazy_import_with_full_marks(folder, tmp_path):
    """The grader run by an interpreter that finds JAX only through PYTHONPATH (as after
    ``module load`` or ``pip install --target``), on a right solution that imports rich lazily
    and has a rich.py of its own beside it: full marks, exit 0, the real rich in both imports.
    JAX's folder is the venv's site-packages, or a folder of links into it (a Spack or Nix
    view): what the links point to stays reachable where the checkout holding it is hidden."""
    python = base_python_without_jax()
    site = SITE_PACKAGES
    if folder == "links":
        site = str(tmp_path / "view")
        dependencies_into(tmp_path / "view")
    student = tmp_path / "student"
    student.mkdir()
    # imported by name, so the rich.py beside it travels with it into the sandbox
    (student / "solution.py").write_text("import rich\n" + SOLUTION.read_text())
    (student / "rich.py").write_text(SHADOW)
    done = subprocess.run([python, "-m", "grader", "check", "student/solution.py", "-e", "named_sharding_replicated"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env=_pythonpath_env(site, str(REPO)))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Score: 10/10" in done.stdout and "CPU 0" in done.stdout  # full marks; rich drew the layout
