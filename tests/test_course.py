"""A course folder (docs/course.md): found from the working folder upwards (jaxgrade.toml, or
[tool.jaxgrade] in pyproject.toml) or named with --course; its own exercises beside the track's
(all of them, some or none); ``jaxgrade init`` and ``jaxgrade new`` write into it; a bad
setting, or a JAXGRADE_EXERCISES naming a missing folder, is one line and exit 2, never a crash.
From a pip-installed jaxgrade: tests/test_packaging.py."""
from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE
from grader.cli import main
from grader.authoring.exercise import own_exercises

TRACK = sorted(p.name for p in (SEED_EXERCISE.parent).iterdir() if (p / "exercise.toml").is_file())


@pytest.fixture
def course(tmp_path, monkeypatch) -> Path:
    """A course made by ``jaxgrade init``, holding one exercise of its own, the working folder below it."""
    monkeypatch.delenv("JAXGRADE_EXERCISES", raising=False)
    folder = tmp_path / "course"
    assert main(["init", str(folder)]) == 0
    own = folder / "exercises" / "ring_allreduce"
    shutil.copytree(SEED_EXERCISE, own, ignore=shutil.ignore_patterns("__pycache__", "right", "wrong"))
    toml = own / "exercise.toml"
    toml.write_text(toml.read_text().replace('slug = "named_sharding_replicated"', 'slug = "ring_allreduce"'))
    (folder / "notes").mkdir()
    monkeypatch.chdir(folder / "notes")
    return folder


def _listed(capsys) -> list[str]:
    capsys.readouterr()
    assert main(["list"]) == 0
    return [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]


def test_a_course_lists_its_exercises_then_the_tracks(course, capsys):
    assert _listed(capsys) == ["ring_allreduce", *TRACK]
    assert [e.slug for e in own_exercises()] == ["ring_allreduce"]  # what validate proves by default


def test_list_shows_each_exercises_version_and_whether_its_key_is_here(course, capsys):
    """The course's own exercise has no reference.py (no key): validating or exporting it needs one."""
    (course / "exercises" / "ring_allreduce" / "reference.py").unlink()
    toml = course / "exercises" / "ring_allreduce" / "exercise.toml"
    toml.write_text(toml.read_text().replace('version = "3"', 'version = "7-course"'))
    capsys.readouterr()
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["slug", "title", "version", "points", "devices", "key"]
    own = next(line for line in lines if line.startswith("ring_allreduce")).split()
    assert own[-4:] == ["7-course", "10", "8", "absent"], own
    track = next(line for line in lines if line.startswith("sgd_step")).split()
    assert track[-1] == "present" and track[-4] == "2", track
    assert "key absent" in lines[-1] and "docs/keys.md" in lines[-1]


def test_a_course_chooses_the_tracks_exercises(course, capsys):
    toml = course / "jaxgrade.toml"
    toml.write_text(toml.read_text().replace('track = "all"', 'track = ["sgd_step", "named_sharding_replicated"]'))
    assert _listed(capsys) == ["ring_allreduce", "named_sharding_replicated", "sgd_step"]
    toml.write_text(toml.read_text().replace('track = ["sgd_step", "named_sharding_replicated"]', 'track = "none"'))
    assert _listed(capsys) == ["ring_allreduce"]
    toml.write_text(toml.read_text().replace('track = "none"', 'track = ["sdg_step"]'))
    assert main(["list"]) == 2
    assert "track names sdg_step, which the track does not have" in capsys.readouterr().err


def test_a_course_in_pyproject_and_a_changed_track_exercise(tmp_path, monkeypatch, capsys):
    """[tool.jaxgrade] in pyproject.toml; the course's copy of a track exercise is the one used."""
    monkeypatch.delenv("JAXGRADE_EXERCISES", raising=False)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "my-course"\n\n[tool.jaxgrade]\nexercises = "labs"\n')
    shutil.copytree(SEED_EXERCISE, tmp_path / "labs" / "sgd_step", ignore=shutil.ignore_patterns("__pycache__"))
    toml = tmp_path / "labs" / "sgd_step" / "exercise.toml"
    toml.write_text(toml.read_text().replace('slug = "named_sharding_replicated"', 'slug = "sgd_step"')
                    .replace('title = "NamedSharding (replicated)"', 'title = "Our own SGD step"'))
    monkeypatch.chdir(tmp_path)
    assert _listed(capsys) == ["sgd_step", *(slug for slug in TRACK if slug != "sgd_step")]
    assert main(["list"]) == 0 and "Our own SGD step" in capsys.readouterr().out


def test_course_option_names_the_course_from_anywhere(course, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["list", "--course", str(course)]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("ring_allreduce")
    assert main(["--course", str(tmp_path), "list"]) == 2
    assert f"--course {tmp_path}: no jaxgrade.toml there" in capsys.readouterr().err
    assert main(["list"]) == 0 and "ring_allreduce" not in capsys.readouterr().out  # no course here


@pytest.mark.parametrize("setting, message", [('colour = "blue"', "unknown setting(s) colour"),
                                              ('exercises = "labs"', "exercises folder"),
                                              ('track = 3', "track = 3"),
                                              ('helpers = "missing"', "helpers = 'missing' is not a package folder")])
def test_a_bad_course_setting_is_one_line(course, capsys, setting, message):
    toml = course / "jaxgrade.toml"
    key = setting.split()[0]
    lines = [line for line in toml.read_text().splitlines() if not line.startswith(f"{key} =")]
    toml.write_text("\n".join([*lines, setting]) + "\n")
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(toml) in err, err


def test_new_writes_into_the_course_and_init_refuses_a_course(course, capsys):
    assert main(["new", "moe_dispatch"]) == 0
    assert (course / "exercises" / "moe_dispatch" / "exercise.toml").is_file()
    assert not (SEED_EXERCISE.parent / "moe_dispatch").exists()
    assert "moe_dispatch" in _listed(capsys)
    assert main(["init", str(course)]) == 2
    assert "is a course" in capsys.readouterr().err


def test_jaxgrade_exercises_takes_several_folders_and_names_a_missing_one(tmp_path, monkeypatch, capsys):
    first, second = tmp_path / "a", tmp_path / "b"
    shutil.copytree(SEED_EXERCISE, first / SEED_EXERCISE.name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(SEED_EXERCISE.parent / "sgd_step", second / "sgd_step", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("JAXGRADE_EXERCISES", os.pathsep.join(map(str, (first, second))))
    assert _listed(capsys) == [SEED_EXERCISE.name, "sgd_step"]
    monkeypatch.setenv("JAXGRADE_EXERCISES", str(tmp_path / "missing"))
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert f"JAXGRADE_EXERCISES names {tmp_path / 'missing'}, which is not a folder" in err and "Traceback" not in err


def test_new_from_copies_a_track_exercise_in_to_be_changed(course, capsys):
    from grader.authoring.exercise import find_exercise
    assert main(["new", "--from", "sgd_step"]) == 0
    copied = course / "exercises" / "sgd_step"
    assert (copied / "reference.py").is_file() and find_exercise("sgd_step").directory == copied
    assert main(["new", "my_replicated", "--from", SEED_EXERCISE.name]) == 0
    mine = find_exercise("my_replicated")
    assert mine.directory == course / "exercises" / "my_replicated" and mine.slug == "my_replicated"
    assert mine.variants("wrong") and [c.id for c in mine.checks] == list(mine.points)
    assert _listed(capsys)[:3] == ["my_replicated", "ring_allreduce", "sgd_step"]
    assert main(["new", "--from", "sgd_step"]) == 2  # the course's copy exists already
    assert "already exists" in capsys.readouterr().err
    assert main(["new"]) == 2 and "jaxgrade new --from SLUG" in capsys.readouterr().err


def test_another_projects_pyproject_above_is_no_course(tmp_path, monkeypatch, capsys):
    """A pyproject.toml without [tool.jaxgrade] (even one TOML cannot read) is not a course's."""
    monkeypatch.delenv("JAXGRADE_EXERCISES", raising=False)
    (tmp_path / "pyproject.toml").write_text("[project\nname = 'broken'\n")
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    assert _listed(capsys) == TRACK
    (tmp_path / "pyproject.toml").write_text("[tool.jaxgrade\nexercises = 'labs'\n")
    assert main(["list"]) == 2 and str(tmp_path / "pyproject.toml") in capsys.readouterr().err


def _set(course: Path, setting: str) -> None:
    """Replace (or add) one setting of the course's jaxgrade.toml."""
    toml = course / "jaxgrade.toml"
    key = setting.split()[0]
    lines = [line for line in toml.read_text().splitlines() if not line.startswith(f"{key} =")]
    toml.write_text("\n".join([*lines, setting]) + "\n")


def test_a_pinned_track_exercise_of_another_version_refuses_to_grade(course, capsys):
    """A pin that matches is the list it names; one the installed track moved past is exit 2
    saying what to do, for every command; a course's own copy of the slug makes its pin moot."""
    _set(course, 'track = {sgd_step = "2", named_sharding_replicated = 3}')
    assert _listed(capsys) == ["ring_allreduce", "named_sharding_replicated", "sgd_step"]
    _set(course, 'track = {sgd_step = "1", named_sharding_replicated = "3"}')
    for command in (["list"], ["check", str(SEED_EXERCISE / "reference.py")], ["validate", "sgd_step"]):
        capsys.readouterr()
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "sgd_step is pinned to version 1, the installed track has version 2" in err
        assert "pip install 'jaxgrade==RELEASE'" in err and "sgd_step = '2'" in err and "Traceback" not in err
    shutil.copytree(SEED_EXERCISE.parent / "sgd_step", course / "exercises" / "sgd_step",
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert _listed(capsys) == ["ring_allreduce", "sgd_step", "named_sharding_replicated"]


HELPERS = '''"""Shared by the course's checks."""
RETURNS_TITLE = "Returns said by the course's helper"
'''


def test_a_courses_checks_import_its_helpers_and_the_exports_carry_them(course, tmp_path, capsys):
    """checks.py imports the package jaxgrade.toml names (from that folder alone), editing it is
    a changed exercise, and the student and Gradescope exports carry it where their copy of the
    exercise loads it again."""
    import zipfile

    from grader.authoring.exercise import find_exercise
    (course / "course_helpers").mkdir()
    (course / "course_helpers" / "__init__.py").write_text(HELPERS)
    _set(course, 'helpers = "course_helpers"')
    checks = course / "exercises" / "ring_allreduce" / "checks.py"
    source = checks.read_text()
    assert 'title="Returns a float32 JAX array of shape ()"' in source
    checks.write_text("from course_helpers import RETURNS_TITLE\n" + source.replace(
        'title="Returns a float32 JAX array of shape ()"', "title=RETURNS_TITLE", 1))
    exercise = find_exercise("ring_allreduce")
    assert exercise.helpers == (course / "course_helpers",)
    assert "Returns said by the course's helper" in [c.title for c in exercise.checks]
    from grader.batch.distributed import pack_exercise, unpack_exercise
    moved = unpack_exercise(pack_exercise(exercise), tmp_path / "worker")  # a Dask worker's copy, helpers carried
    assert moved.helpers[0].parent.name == "_helpers" and moved.fingerprint == exercise.fingerprint
    before = exercise.fingerprint
    (course / "course_helpers" / "__init__.py").write_text(HELPERS.replace("said by", "worded by"))
    assert find_exercise("ring_allreduce").fingerprint != before
    assert main(["export", "student", "-e", "ring_allreduce", "-o", str(tmp_path / "pack")]) == 0
    carried = tmp_path / "pack" / ".jaxgrade" / "exercises" / "ring_allreduce" / "_helpers" / "course_helpers"
    assert (carried / "__init__.py").read_text() == HELPERS.replace("said by", "worded by")
    assert main(["export", "gradescope", "-e", "ring_allreduce", "-o", str(tmp_path / "gs.zip")]) == 0
    names = zipfile.ZipFile(tmp_path / "gs.zip").namelist()
    assert any(n.endswith("exercises/ring_allreduce/_helpers/course_helpers/__init__.py") for n in names), names
    capsys.readouterr()
    _set(course, 'helpers = "exercises"')  # a folder without __init__.py
    assert main(["list"]) == 2 and "is not a package folder" in capsys.readouterr().err


@pytest.mark.slow
def test_the_worked_course_validates_from_inside_it(monkeypatch, capsys):
    """examples/course, from a checkout: ``list`` from inside it, ``validate --course`` from
    outside (what its CI runs; tests/test_packaging.py runs it with a pip-installed jaxgrade)."""
    monkeypatch.delenv("JAXGRADE_EXERCISES", raising=False)
    worked = REPO / "examples" / "course"
    monkeypatch.chdir(worked / "exercises" / "row_max")
    assert _listed(capsys) == ["row_max", "shard_rows", "named_sharding_replicated"]
    monkeypatch.chdir(worked.parent)
    capsys.readouterr()
    assert main(["validate", "--course", str(worked), "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    assert "2/2 exercise(s) valid" in out and "row_max" in out and "shard_rows" in out, out


def test_the_worked_courses_ci_is_a_github_workflow_that_validates_it():
    """examples/course/.github/workflows/validate.yml is a workflow GitHub accepts (its schema,
    tests/data) whose steps install jaxgrade and run jaxgrade validate in the course."""
    import json

    import jsonschema
    import yaml
    workflow = yaml.safe_load((REPO / "examples" / "course" / ".github" / "workflows" / "validate.yml").read_text())
    jsonschema.Draft7Validator(json.loads((REPO / "tests" / "data" / "github-workflow.json").read_text())
                               ).validate(workflow)
    runs = [step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]]
    assert any("pip install" in r and "jaxgrade" in r for r in runs)
    assert any(r.startswith("jaxgrade validate") for r in runs), runs


def test_the_tracks_keys_beside_a_course(course, tmp_path, capsys):
    """``keys`` in jaxgrade.toml (or ``--keys DIR``) names the track's exercises with their keys:
    they replace the installed track's under the course's pins, and the course keeps its own
    exercises and helpers. The keys folder here holds sgd_step at a version the installed track
    does not have, so a pin that holds proves the folder is the one used."""
    import zipfile

    keys = tmp_path / "checkout" / "exercises"
    shutil.copytree(SEED_EXERCISE.parent / "sgd_step", keys / "sgd_step", ignore=shutil.ignore_patterns("__pycache__"))
    toml = keys / "sgd_step" / "exercise.toml"
    installed = tomllib.loads(toml.read_text())["version"]
    toml.write_text(toml.read_text().replace(f'version = "{installed}"', 'version = "99"'))
    (course / "course_helpers").mkdir()
    (course / "course_helpers" / "__init__.py").write_text(HELPERS)
    checks = course / "exercises" / "ring_allreduce" / "checks.py"
    checks.write_text("from course_helpers import RETURNS_TITLE\n" + checks.read_text().replace(
        'title="Returns a float32 JAX array of shape ()"', "title=RETURNS_TITLE", 1))
    _set(course, 'helpers = "course_helpers"')
    _set(course, 'track = {sgd_step = "99"}')
    assert main(["list"]) == 2 and f"the installed track has version {installed}" in capsys.readouterr().err
    assert main(["--keys", str(keys), "list"]) == 0  # the option, for this command
    _set(course, f'keys = "{os.path.relpath(keys, course)}"')  # the setting, relative to the course
    assert _listed(capsys) == ["ring_allreduce", "sgd_step"]
    capsys.readouterr()
    assert main(["validate", "sgd_step", "--seeds", "1"]) == 0, capsys.readouterr()
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    shutil.copy(keys / "sgd_step" / "reference.py", submissions / "alice.py")
    assert main(["grade", str(submissions), "-e", "sgd_step", "-o", str(tmp_path / "class")]) == 0
    out = tmp_path / "autograders"
    assert main(["export", "gradescope", "-e", "ring_allreduce", "-e", "sgd_step", "-o", str(out)]) == 0
    names = zipfile.ZipFile(out / "ring_allreduce.zip").namelist()
    assert "exercises/ring_allreduce/_helpers/course_helpers/__init__.py" in names, names
    assert 'version = "99"' in zipfile.ZipFile(out / "sgd_step.zip").read("exercises/sgd_step/exercise.toml").decode()
    _set(course, 'keys = "nowhere"')
    assert main(["list"]) == 2 and "keys = 'nowhere'" in capsys.readouterr().err
