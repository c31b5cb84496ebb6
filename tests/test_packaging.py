"""A plain (non-editable) install carries the exercises and templates with the package."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_non_editable_install_carries_exercises_and_templates(tmp_path):
    target = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                            "--no-compile", "--target", str(target), str(REPO)],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert build.returncode == 0, build.stderr[-2000:]
    package = target / "grader"
    for relative in ("exercises/named_sharding_replicated/exercise.toml",
                     "exercises/named_sharding_replicated/checks.py",
                     "exercises/named_sharding_replicated/wrong/structure_no_placement.py",
                     "templates/report.txt.j2"):
        assert (package / relative).is_file(), relative
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
