"""``jaxgrade new``: the scaffold is a complete exercise once the author fills in two things."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.authoring.exercise import load_exercise
from grader.authoring.scaffold import scaffold
from grader.authoring.validate import validate

ROOT = Path(__file__).resolve().parent.parent


def _jaxgrade(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ), timeout=120)


def test_the_folder_has_every_part_of_the_format(tmp_path: Path) -> None:
    directory = scaffold("double_it", tmp_path, title="Double it", devices=4)
    for name in ("exercise.toml", "statement.md", "starter.py", "reference.py", "checks.py",
                 "wrong/load_wrong_name.py"):
        assert (directory / name).is_file(), name
    assert (directory / "right").is_dir()
    exercise = load_exercise(directory)
    assert (exercise.slug, exercise.title, exercise.function, exercise.devices) == \
        ("double_it", "Double it", "double_it", 4)
    assert [c.id for c in exercise.checks] == list(exercise.points)  # checks and [points] agree
    assert [v.expect for v in exercise.variants("wrong")] == ["load"]
    assert "def double_it(x" in exercise.starter.read_text()
    assert exercise.probe["x"].ndim == 1 and exercise.signature_text == "double_it(x: jax.Array) -> jax.Array"


@pytest.mark.slow
def test_unfilled_it_does_not_validate_and_filled_in_it_does(tmp_path: Path) -> None:
    directory = scaffold("double_it", tmp_path)
    [before] = validate([load_exercise(directory)], seeds=(0,), workers=1)
    assert not before.ok  # the reference still raises NotImplementedError

    reference = directory / "reference.py"
    reference.write_text(reference.read_text().replace(
        '    raise NotImplementedError("write the reference solution of double_it")', "    return x + x"))
    checks = directory / "checks.py"
    checks.write_text(checks.read_text().replace(
        '    raise NotImplementedError("write the expected answer of double_it in checks.py")',
        "    return np.asarray(x, np.float64) * 2"))
    [after] = validate([load_exercise(directory)], seeds=(0, 1), workers=2)
    assert not after.errors and all(v.ok for v in after.variants), \
        [(v.name, [x.problem for x in v.verdicts]) for v in after.variants]
    assert {v.name for v in after.variants} == {"reference", "wrong/load_wrong_name.py"}
    # What remains is the author's: structure checks, the mistakes students make, other solutions.
    missing = " ".join(after.requirements)
    assert "structure checks" in missing and "wrong/ needs" in missing and "right/ needs" in missing


def test_bad_slugs_and_existing_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a valid slug"):
        scaffold("Bad-Slug", tmp_path)
    with pytest.raises(ValueError, match="not a Python function name"):
        scaffold("fine", tmp_path, function="not-a-name")
    scaffold("taken", tmp_path)
    with pytest.raises(FileExistsError, match="already exists"):
        scaffold("taken", tmp_path)


@pytest.mark.slow
def test_the_command_writes_the_folder_and_reports_usage_errors(tmp_path: Path) -> None:
    made = _jaxgrade("new", "halve_it", "--root", str(tmp_path), "--function", "halve", "--title", "Halve it")
    assert made.returncode == 0, made.stderr
    assert "jaxgrade validate halve_it" in made.stdout
    exercise = load_exercise(tmp_path / "halve_it")
    assert (exercise.function, exercise.title) == ("halve", "Halve it")

    again = _jaxgrade("new", "halve_it", "--root", str(tmp_path))
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = _jaxgrade("new", "9lives", "--root", str(tmp_path))
    assert bad.returncode == 2 and "not a valid slug" in bad.stderr
