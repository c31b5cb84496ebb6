"""The PrairieLearn export grades in whatever working directory the platform starts it in, and no
file of the student's folder is ever imported or run as grader code (#41.6).

The student's folder holds, besides the submission, a file named after every top-level module
the grading process imports (asked of a real grading process, not listed by hand: grader, jax,
json, numpy, encodings...), plus a ``grader`` package and sitecustomize/usercustomize. Each one,
if imported, leaves a marker and writes a full score where PrairieLearn reads results, then ends
the process. run.sh is started from that folder, with ``PYTHONPATH=.`` as an image might set it.
The results must be those of the same job started from elsewhere, and no marker may exist."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from grader.authoring.exercise import find_exercise
from grader.authoring.export import export_prairielearn
from test_render import prairielearn_reads

SLUG = "named_sharding_replicated"
SUBMISSION = REPO / "exercises" / SLUG / "wrong" / "value_skips_first.py"
HOSTILE = (REPO / "tests" / "hostile" / "grader.py").read_text()
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="the exported grader grades as root (a sandbox uid per "
                                                          "submission) and refuses otherwise")]
# What the grading process imports, asked of a process that imports what prairielearn-grade does.
IMPORTED = ("import sys, grader.authoring.export, grader.authoring.export.prairielearn, grader.authoring.export.container_grading, grader.engine, grader.report.render, "
            "grader.sandbox.process, jax, numpy, hypothesis; "
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")


def _module_names() -> list[str]:
    done = subprocess.run([sys.executable, "-I", "-c", IMPORTED], capture_output=True, text=True, timeout=120,
                          cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    names = [n for n in done.stdout.split() if n.isidentifier() and n != "__main__"]
    assert {"grader", "jax", "json", "numpy"} <= set(names)
    return names


def _job(question: Path, root: Path, decoys: list[str]) -> Path:
    """A grading job laid out as PrairieLearn's grader host does (/grade/tests, /grade/student,
    /grade/data), the student's folder full of decoys."""
    shutil.copytree(question / "tests", root / "tests")
    student = root / "student"
    student.mkdir(parents=True)
    (root / "data").mkdir()
    (root / "data" / "data.json").write_text(json.dumps({"params": {}, "submitted_answers": {}}))
    shutil.copy(SUBMISSION, student / f"{SLUG}.py")
    for name in decoys:
        (student / f"{name}.py").write_text(HOSTILE)
    package = student / "grader" / "export"  # a package beats a module of the same name on sys.path
    package.mkdir(parents=True)
    for path in (student / "grader" / "__init__.py", package / "__init__.py", package / "__main__.py"):
        path.write_text(HOSTILE)
    return root


def _run(root: Path, cwd: Path, **extra: str) -> dict:
    env = {**os.environ, "JAXGRADE_GRADE_ROOT": str(root), "JAXGRADE_PYTHON": sys.executable, **extra}
    env.pop("JAXGRADE_EXERCISES", None)
    done = subprocess.run(["bash", str(root / "tests" / "run.sh")], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (root / "results" / "results.json").is_file(), done.stdout[-3000:]
    return prairielearn_reads((root / "results" / "results.json").read_text())


def _comparable(read: dict) -> dict:
    results = read["results"]
    return {"gradable": read["gradable"], "score": read["score"],
            "tests": [{k: t.get(k) for k in ("name", "points", "max_points")} for t in results["tests"]]}


def test_run_sh_from_the_students_folder_imports_nothing_of_it_and_grades_as_from_elsewhere(tmp_path):
    question = export_prairielearn(find_exercise(SLUG), tmp_path / "question" / SLUG, image="course/grader:1")
    decoys = [*_module_names(), "sitecustomize", "usercustomize"]
    elsewhere = _run(_job(question, tmp_path / "plain", []), cwd=tmp_path)
    root = _job(question, tmp_path / "grade", decoys)
    student = root / "student"
    inside = _run(root, cwd=student, PYTHONPATH=".", PYTHONSTARTUP=str(student / "json.py"))
    assert not (student / "GRADER-PY-IMPORTED").exists() and not (root / "GRADER-PY-IMPORTED").exists()
    assert inside["gradable"] and 0 < inside["score"] < 1  # value_skips_first: graded, not the decoys' 1.0
    assert _comparable(inside) == _comparable(elsewhere)
    assert sorted(p.name for p in student.iterdir() if p.suffix == ".py") == sorted(
        [f"{SLUG}.py", *(f"{n}.py" for n in decoys)])  # the student's folder as it was
