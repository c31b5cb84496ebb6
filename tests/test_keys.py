"""Answer keys never reach students (docs/keys.md): an exercise without its key (reference.py,
right/, wrong/), as ``pip install jaxgrade`` and the student pack hold it, still loads and its
checks grade; the instructor's commands that need the key (validate, grade, the autograder
exports) refuse with one line saying what is missing, and write nothing. Here the keyless copy
is a folder of JAXGRADE_EXERCISES (its author is told to write the reference); the installed
track's (the message names jaxgrade's repository) is built and searched in tests/test_packaging.py."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import SEED_EXERCISE
from grader.cli import main
from grader.authoring.exercise import KEY_PARTS, all_exercises, load_exercise

REPO = Path(__file__).resolve().parent.parent
SLUG = SEED_EXERCISE.name


@pytest.fixture
def keyless(tmp_path, monkeypatch) -> Path:
    """An exercises folder holding the seed exercise as the wheel carries it: no key."""
    root = tmp_path / "exercises"
    shutil.copytree(SEED_EXERCISE, root / SLUG, ignore=shutil.ignore_patterns(*KEY_PARTS, "__pycache__"))
    monkeypatch.setenv("JAXGRADE_EXERCISES", str(root))
    return root


def test_an_exercise_without_its_key_loads_with_its_checks(keyless):
    exercise = load_exercise(keyless / SLUG)
    assert not exercise.has_key and not exercise.variants("right") and not exercise.variants("wrong")
    assert [c.id for c in exercise.checks] == list(exercise.points)
    assert load_exercise(SEED_EXERCISE).has_key


@pytest.mark.parametrize("command", [["validate"], ["validate", SLUG], ["grade", "SUBMISSIONS", "-e", SLUG],
                                     ["export", "gradescope", "-e", SLUG], ["export", "prairielearn", "-e", SLUG]])
def test_what_needs_the_key_says_so(keyless, tmp_path, capsys, command):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    shutil.copy(SEED_EXERCISE / "starter.py", submissions / "alice.py")
    out = tmp_path / ("autograder.zip" if "gradescope" in command else "out")
    argv = [str(submissions) if part == "SUBMISSIONS" else part for part in command]
    assert main([*argv, *(["-o", str(out)] if command[0] != "validate" else [])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"answer key (reference.py, right/, wrong/) of {SLUG}" in err, err
    assert f"{keyless / SLUG} has none: write its reference.py there" in err
    assert not out.exists()  # refused before writing anything


def test_the_student_export_needs_no_key(keyless, tmp_path):
    assert main(["export", "student", "-e", SLUG, "-o", str(tmp_path / "pack")]) == 0
    assert (tmp_path / "pack" / ".jaxgrade" / "exercises" / SLUG / "checks.py").is_file()


def test_the_tracks_checks_are_all_visible():
    """The wheel carries each exercise's checks.py as it is, for ``jaxgrade check``: a check of the
    track that students must not see would ship with it. A course's exercises, which no wheel
    carries, may hide checks (the student export removes them)."""
    hidden = {e.slug: e.visibility for e in all_exercises() if set(e.visibility.values()) - {"visible"}}
    assert not hidden, (f"{hidden}: the wheel ships checks.py to students; a track exercise keeps every check "
                        "visible (docs/keys.md)")


def test_the_track_is_the_checkout_with_its_keys():
    assert all(e.has_key and e.directory.parent == REPO / "exercises" for e in all_exercises())
