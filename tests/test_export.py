"""jaxgrade export: the Gradescope autograder zip, run for real against a fake /autograder tree,
and the student folder, which must hold no reference solution, no known-wrong or right
variants and no hidden check, and whose check script grades the visible checks."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.cli import main
from grader.errors import ExerciseError, ExportError
from grader.exercise import find_exercise, load_exercise
from grader.export import copy_exercise, export_gradescope, export_student, visible_checks_source

REPO = Path(__file__).resolve().parent.parent
SLUG = "named_sharding_replicated"
EXERCISE_DIR = REPO / "exercises" / SLUG
WITHHELD = ("value.special_inputs", "structure.mesh")


@pytest.fixture(scope="module")
def exercise():
    return find_exercise(SLUG)


@pytest.fixture(scope="module")
def autograder_zip(exercise, tmp_path_factory) -> Path:
    return export_gradescope(exercise, tmp_path_factory.mktemp("zip") / "autograder.zip")


def _fake_autograder(zip_path: Path, root: Path) -> Path:
    """Lay the zip out as Gradescope does: contents in /autograder/source, run_autograder copied up."""
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    for info in zipfile.ZipFile(zip_path).infolist():  # extractall drops the mode bits
        mode = info.external_attr >> 16
        if mode:
            os.chmod(root / "source" / info.filename, stat.S_IMODE(mode))
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    return root


def _run_autograder(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "JAXGRADE_AUTOGRADER_ROOT": str(root), "JAXGRADE_PYTHON": sys.executable}
    return subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)


# --- Gradescope -----------------------------------------------------------------------------------

def test_zip_holds_the_scripts_the_source_and_only_what_grading_needs(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as archive:
        names = set(archive.namelist())
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in archive.infolist()}
        setup = archive.read("setup.sh").decode()
    assert {"setup.sh", "run_autograder", "jaxgrade/pyproject.toml", "jaxgrade/grader/report/render.py",
            "jaxgrade/templates/report.md.j2", f"jaxgrade/exercises/{SLUG}/checks.py",
            f"jaxgrade/exercises/{SLUG}/exercise.toml"} <= names
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert not [n for n in names if "/wrong/" in n or "/right/" in n or "__pycache__" in n or n.startswith("tests/")]
    assert 'pip install "$SOURCE/jaxgrade"' in setup and "python3.11" in setup
    assert subprocess.run(["bash", "-n", "-c", setup]).returncode == 0


def test_bundled_source_installs_the_exercise_and_templates(autograder_zip, tmp_path):
    """What setup.sh's pip install builds, minus downloading the dependencies: setuptools'
    build_py over the bundled source, reading its pyproject.toml, must lay out the package
    with the exercise and the templates inside it."""
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(tmp_path / "source")
    done = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py",
                           "--build-lib", str(tmp_path / "lib")], cwd=tmp_path / "source" / "jaxgrade",
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    built = {str(p.relative_to(tmp_path / "lib")) for p in (tmp_path / "lib").rglob("*") if p.is_file()}
    assert {"grader/export.py", "grader/templates/report.html.j2", f"grader/exercises/{SLUG}/checks.py",
            f"grader/exercises/{SLUG}/reference.py"} <= built


def test_run_autograder_grades_a_submission(autograder_zip, tmp_path):
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    shutil.copy(EXERCISE_DIR / "wrong" / "structure_all_devices.py", root / "submission" / f"{SLUG}.py")
    (root / "submission" / "notes.txt").write_text("not code")
    # Mark the bundled templates, to prove run_autograder runs the bundled source.
    template = root / "source" / "jaxgrade" / "templates" / "gradescope_output.md.j2"
    template.write_text(template.read_text() + "\nbundled template in use\n")
    done = _run_autograder(root)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not any(line.lstrip().startswith(("{", "[")) for line in done.stdout.splitlines()), done.stdout
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 9 and results["output_format"] == "md" and results["execution_time"] > 0
    assert "bundled template in use" in results["output"]
    statuses = {t["extra_data"]["id"]: t["status"] for t in results["tests"]}
    assert len(statuses) == 9 and statuses["structure.mesh"] == "failed"
    assert all(t["status"] in ("passed", "failed") and t["visibility"] == "visible" for t in results["tests"])


def test_run_autograder_explains_a_missing_submission(autograder_zip, tmp_path):
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    (root / "submission" / "README.md").write_text("forgot the code")
    done = _run_autograder(root)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and results["tests"] == []
    assert "No Python file was submitted" in results["output"] and f"{SLUG}.py" in results["output"]


def test_run_autograder_writes_no_results_when_the_grader_itself_fails(autograder_zip, tmp_path):
    """A broken grader must not record a score: Gradescope then flags the run for the instructor."""
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    shutil.copy(EXERCISE_DIR / "reference.py", root / "submission" / f"{SLUG}.py")
    (root / "source" / "jaxgrade" / "exercises" / SLUG / "exercise.toml").write_text("not = [toml")
    done = _run_autograder(root)
    assert done.returncode == 1
    assert not (root / "results" / "results.json").exists()
    assert "no results.json was written" in done.stderr


def test_cli_export_gradescope_wants_a_zip(tmp_path, capsys):
    assert main(["export", "gradescope", "-e", SLUG, "-o", str(tmp_path / "autograder.tar")]) == 2
    assert "Gradescope takes a .zip" in capsys.readouterr().err


# --- student folder -------------------------------------------------------------------------------

def _all_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_student_export_has_no_solution_and_no_variants(exercise, tmp_path):
    out = export_student(exercise, tmp_path / "student")
    files = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert {"README.md", "statement.md", f"{SLUG}.py", "check"} <= files
    assert not [f for f in files if f.endswith("reference.py") or "/wrong/" in f or "/right/" in f]
    reference_body = (EXERCISE_DIR / "reference.py").read_text().split("def ", 1)[1]
    assert reference_body not in _all_text(out)
    assert (out / f"{SLUG}.py").read_text() == \
        (EXERCISE_DIR / "starter.py").read_text().replace("THIS_FILE.py", f"{SLUG}.py")
    assert os.access(out / "check", os.X_OK)


def test_student_export_removes_hidden_checks_and_checks_the_visible_ones(hidden_exercise, tmp_path):
    out = export_student(hidden_exercise, tmp_path / "student")
    text = _all_text(out)
    for secret in (*WITHHELD, "FixedCases", "3e38", "special-casing", "MeshMatches", "non-finite vectors"):
        assert secret not in text, f"the student export leaks {secret!r}"
    assert "Your instructor grades 2 more checks" in (out / "README.md").read_text()
    shutil.copy(EXERCISE_DIR / "reference.py", out / f"{SLUG}.py")
    env = {k: v for k, v in os.environ.items() if k != "JAXGRADE_EXERCISES"}
    done = subprocess.run([sys.executable, str(out / "check")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Score: 8/8 · all checks passed" in done.stdout  # the visible checks, and nothing is hidden here
    assert done.stdout.count("PASS ") == 7 and "hidden" not in done.stdout
    wrong = out / "wrong_try.py"
    shutil.copy(EXERCISE_DIR / "wrong" / "value_skips_first.py", wrong)
    done = subprocess.run([sys.executable, str(out / "check"), str(wrong)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Score: 6/8" in done.stdout


def test_student_export_refuses_a_used_folder(exercise, tmp_path):
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "mine.py").write_text("x = 1\n")
    with pytest.raises(ExportError, match="not an empty folder"):
        export_student(exercise, tmp_path / "student")
    assert main(["export", "student", "-e", SLUG, "-o", str(tmp_path / "student")]) == 2


def test_visible_checks_source_drops_checks_and_what_only_they_use():
    source = '''
import numpy as np
from grader.checks import FixedCases, LoadsFunction, Case
SHARED = 3
SECRET_CASES = (Case(label="secret", code="[4e38]"),)
def secret_helper():
    return SECRET_CASES
CHECKS = [
    LoadsFunction(id="load.function", title=f"loads {SHARED}"),
    FixedCases(id="value.hidden", title="hidden", cases=secret_helper()),  # a comment about it
]
PROBE = np.zeros(SHARED)
'''
    out = visible_checks_source(source, {"load.function"}, "checks.py")
    assert "value.hidden" not in out and "SECRET_CASES" not in out and "secret_helper" not in out
    assert "4e38" not in out and "comment" not in out and "FixedCases" not in out and "Case" not in out
    assert "SHARED = 3" in out and "PROBE = np.zeros(SHARED)" in out and 'id="load.function"' in out.replace("'", '"')
    compile(out, "checks.py", "exec")
    with pytest.raises(ExportError, match="list literal"):
        visible_checks_source("CHECKS = BASE + []\n", set(), "checks.py")
    with pytest.raises(ExportError, match="literal id="):
        visible_checks_source("CHECKS = [make(1)]\n", set(), "checks.py")


def test_exercise_toml_rejects_bad_visibility(tmp_path):
    directory = copy_exercise(find_exercise(SLUG), tmp_path / SLUG)
    toml = (directory / "exercise.toml").read_text()
    (directory / "exercise.toml").write_text(toml + '\n[visibility]\n"load.function" = "secret"\n')
    with pytest.raises(ExerciseError, match="use one of visible, after_due_date, after_published, hidden"):
        load_exercise(directory)
    (directory / "exercise.toml").write_text(toml + '\n[visibility]\n"no.such" = "hidden"\n')
    with pytest.raises(ExerciseError, match="not a check"):
        load_exercise(directory)
    (directory / "exercise.toml").write_text(toml + '\n[release]\ndue = 2026-12-01\n')
    with pytest.raises(ExerciseError, match="UTC offset"):
        load_exercise(directory)
