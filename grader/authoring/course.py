"""Where a course's exercises come from: the one module that decides which exercise folders
jaxgrade sees, and in what order (docs/course.md).

- ``JAXGRADE_EXERCISES`` (folders separated by ``os.pathsep``), when set, replaces the rest: an
  exported autograder or pack points it at its one exercise. It never looks for a course, on
  purpose: an autograder may run in the student's folder, whose jaxgrade.toml must not choose
  the exercise that grades it;
- else the course: ``--course DIR`` (:func:`choose_course`), or the first folder from the working
  one upwards holding ``jaxgrade.toml`` or a ``pyproject.toml`` with ``[tool.jaxgrade]`` (as pytest
  finds its rootdir). Its own exercises folder comes first (a slug there hides the track's), then
  the track, all of it or the slugs ``track`` chooses;
- outside any course, the track alone.

The track is the one jaxgrade ships (grader.paths), which a pip install carries without its
answer keys, or the track's keys: a checkout's ``exercises/`` named by ``--keys DIR`` or the
course's ``keys`` setting (docs/keys.md), under the same choice and pins.

What an exercise folder holds, and loading one, is grader.authoring.exercise's.
"""
from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.errors import ExerciseError
from grader.paths import data_folder

COURSE_FILE = "jaxgrade.toml"
_COURSE_KEYS = {"exercises": "the course's exercises folder, relative to the course (default \"exercises\")",
                "track": "the track's exercises the course uses: \"all\" (default), \"none\", a list of slugs, or a "
                         "table pinning each slug to its version ({sgd_step = \"2\"})",
                "helpers": "a package folder of check helpers the course's checks.py import, relative to the course",
                "keys": "the track's exercises with their answer keys (a checkout's exercises folder), used in place of "
                        "the installed track's, relative to the course",
                # a student's folder (the pack's jaxgrade.toml): what `pytest` grades (grader.pytest_plugin)
                "solution": "the solution file pytest grades, relative to the folder",
                "exercise": "the exercise that solution solves (default: the one whose function it defines)"}
# The folder an exported exercise carries the course's helper packages in (grader.authoring.export.bundle).
CARRIED_HELPERS = "_helpers"
# ``jaxgrade --course DIR``: the course for this command, in place of the one found from the
# working folder (grader.cli sets it per command, and the warm service per request).
_chosen_course: Path | None = None
# ``jaxgrade --keys DIR``: the track's exercises with their keys, in place of the course's ``keys``.
_chosen_keys: Path | None = None


@dataclass(frozen=True)
class Course:
    """A course folder (docs/course.md): its own exercises beside the track's."""
    exercises: Path
    track: frozenset[str] | None  # the track's exercises it uses; None: all
    helpers: Path | None = None  # the package folder its checks.py may import
    keys: Path | None = None  # the track's exercises with their keys; None: the installed track


def choose_course(folder: Path | None, keys: Path | None = None) -> None:
    """Use the course in ``folder`` (None: the one found from the working folder) and the track's
    keys in ``keys`` (None: the course's ``keys``, else the installed track) from now on."""
    global _chosen_course, _chosen_keys
    _chosen_course = None if folder is None else Path(folder).resolve()
    _chosen_keys = None if keys is None else Path(keys).resolve()


def _course_settings(folder: Path) -> tuple[Path, dict[str, Any]] | None:
    """The course settings of ``folder``: jaxgrade.toml, else pyproject.toml's [tool.jaxgrade]."""
    for name, inner in ((COURSE_FILE, ()), ("pyproject.toml", ("tool", "jaxgrade"))):
        path = folder / name
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError):  # none here (or not one to read): not a course's
            continue
        if inner and "tool.jaxgrade" not in text:  # another project's pyproject.toml, broken or not
            continue
        try:
            table: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ExerciseError(f"{path}: {error}") from None
        for key in inner:
            table = table.get(key) if isinstance(table, dict) else None
        if isinstance(table, dict):
            return path, table
    return None


def find_course() -> Course | None:
    """The course: ``--course DIR``'s, else the first folder from the working one upwards
    holding jaxgrade.toml or a pyproject.toml with [tool.jaxgrade] (as pytest finds its
    rootdir); None outside any course."""
    if _chosen_course is not None:
        found = _course_settings(_chosen_course)
        if found is None:
            raise ExerciseError(f"--course {_chosen_course}: no {COURSE_FILE} there (nor [tool.jaxgrade] in a "
                                f"pyproject.toml); make one with  jaxgrade init {_chosen_course}")
        return _course(_chosen_course, *found)
    here = Path.cwd()
    for folder in (here, *here.parents):
        found = _course_settings(folder)
        if found is not None:
            return _course(folder, *found)
    return None


def _course(root: Path, path: Path, table: dict[str, Any]) -> Course:
    unknown = sorted(set(table) - set(_COURSE_KEYS))
    if unknown:
        raise ExerciseError(f"{path}: unknown setting(s) {', '.join(unknown)}; a course has "
                            + "; ".join(f"{k}: {v}" for k, v in _COURSE_KEYS.items()))
    exercises = root / str(table.get("exercises", "exercises"))
    if not exercises.is_dir() and "exercises" in table:
        raise ExerciseError(f"{path}: the course's exercises folder {exercises} does not exist; create it, or set "
                            "exercises = \"FOLDER\" to the folder that holds them")
    # a folder that names no exercises folder and has none (a student's, saying what pytest grades)
    # has no exercises of its own: the track's alone
    keys = _keys(root, path, table)
    return Course(exercises, _track(path, table.get("track", "all"), exercises, track_folder(keys)),
                  _helpers(root, path, table), keys)


def _keys(root: Path, path: Path, table: dict[str, Any]) -> Path | None:
    """The course's ``keys``: a folder of the track's exercises, keys included."""
    if "keys" not in table:
        return None
    keys = (root / str(table["keys"])).resolve()
    if not _holds_exercises(keys):
        raise ExerciseError(f"{path}: keys = {table['keys']!r}: {keys} is not a folder of exercises; set it to the "
                            "exercises folder of a checkout of jaxgrade (git clone ... && keys = "
                            "\"/path/to/jaxgrade/exercises\"), or remove the line")
    return keys


def _holds_exercises(folder: Path) -> bool:
    return folder.is_dir() and any((child / "exercise.toml").is_file() for child in folder.iterdir())


def track_folder(course_keys: Path | None = None) -> Path:
    """The track's exercises folder: ``--keys DIR``, else the course's ``keys``, else the track
    jaxgrade ships (a pip install's holds no answer keys, docs/keys.md)."""
    if _chosen_keys is not None:
        if not _holds_exercises(_chosen_keys):
            raise ExerciseError(f"--keys {_chosen_keys}: not a folder of exercises; give the exercises folder of a "
                                "checkout of jaxgrade (docs/keys.md)")
        return _chosen_keys
    return course_keys or data_folder("exercises")


def _track(path: Path, track: Any, exercises: Path, folder: Path) -> frozenset[str] | None:
    """The track's slugs a course uses (None: all), every pin checked against the track in ``folder``."""
    if track in ("all", "none"):
        return None if track == "all" else frozenset()
    pinned = isinstance(track, dict) and all(isinstance(v, (str, int)) for v in track.values())
    if not (pinned or isinstance(track, list) and all(isinstance(s, str) for s in track)):
        raise ExerciseError(f"{path}: track = {track!r}; give \"all\", \"none\", a list of the track's slugs, or a "
                            "table of them with the version each is pinned to ({sgd_step = \"2\"})")
    installed = _track_versions(folder)
    strange = sorted(set(track) - set(installed))
    if strange:
        raise ExerciseError(f"{path}: track names {', '.join(strange)}, which the track does not have; "
                            f"it has {', '.join(sorted(installed))}")
    if pinned:
        # a slug the course holds a copy of (jaxgrade new --from) is graded by that copy: its pin is moot
        moved = [(slug, str(want), installed[slug]) for slug, want in track.items()
                 if str(want) != installed[slug] and not (exercises / slug / "exercise.toml").is_file()]
        if moved:
            holder = "the installed track" if folder == data_folder("exercises") else f"the track in {folder}"
            said = "; ".join(f"{slug} is pinned to version {want}, {holder} has version {have}"
                             for slug, want, have in moved)
            raise ExerciseError(
                f"{path}: {said}. Its checks changed since, so the same submission may get another grade. Install "
                f"the jaxgrade release the course was written with (pip install 'jaxgrade==RELEASE'), or, having read "
                f"the change (docs/course.md#pinning-the-tracks-exercises), pin the installed version "
                f"({', '.join(f'{slug} = {have!r}' for slug, _, have in moved)}), or keep grading as before with a "
                f"copy in the course (jaxgrade new --from SLUG, run with the release you pinned)")
    return frozenset(track)


@functools.lru_cache(maxsize=4)
def _track_versions(track: Path) -> dict[str, str]:
    """The track's exercises in ``track``, each with its exercise.toml's ``version``; read once a
    process (every exercise's load asks for the course): a track version changes with a release."""
    found: dict[str, str] = {}
    for folder in track.iterdir():
        try:
            found[folder.name] = str(tomllib.loads((folder / "exercise.toml").read_text())["version"])
        except (OSError, tomllib.TOMLDecodeError, KeyError):  # not an exercise (or not the track's to judge here)
            continue
    return found


def _helpers(root: Path, path: Path, table: dict[str, Any]) -> Path | None:
    """The course's check-helpers package: a folder holding __init__.py, its name the import name."""
    if "helpers" not in table:
        return None
    helpers = root / str(table["helpers"])
    if not (helpers / "__init__.py").is_file() or not helpers.name.isidentifier():
        raise ExerciseError(f"{path}: helpers = {table['helpers']!r} is not a package folder: make it a folder whose "
                            "name is a Python identifier holding __init__.py (checks.py then imports it by that "
                            "name), or remove the line")
    return helpers


def helper_packages(directory: Path) -> tuple[Path, ...]:
    """The helper packages the checks.py of the exercise in ``directory`` may import: those an
    export carried in with it (its ``_helpers/``), and the course's when the exercise is the
    course's own."""
    carried = directory / CARRIED_HELPERS
    found = sorted(p for p in carried.iterdir() if (p / "__init__.py").is_file()) if carried.is_dir() else []
    course = None if "JAXGRADE_EXERCISES" in os.environ else find_course()
    if course is not None and course.helpers is not None and course.helpers.name not in {p.name for p in found} \
            and directory.resolve().parent == course.exercises.resolve():  # the course's own exercise
        found.append(course.helpers)
    return tuple(found)


def _sources() -> list[tuple[Path, frozenset[str] | None]]:
    """The folders exercises are found in, in order (a slug in an earlier one hides a later
    one's), each with the slugs taken from it (None: all): the folders ``JAXGRADE_EXERCISES``
    lists (separated by ``os.pathsep``; they replace the rest: an exported autograder or pack
    points it at its exercise), else the course's exercises folder, then the track
    (:func:`track_folder`), all of it or the course's choice."""
    if "JAXGRADE_EXERCISES" in os.environ:
        roots = [Path(p) for p in os.environ["JAXGRADE_EXERCISES"].split(os.pathsep) if p]
        missing = [str(r) for r in roots if not r.is_dir()]
        if missing or not roots:
            raise ExerciseError(f"JAXGRADE_EXERCISES names {', '.join(missing) or 'no folder'}, which is not a "
                                f"folder: set it to folders of exercises (separated by {os.pathsep!r}) or unset it")
        return [(root, None) for root in roots]
    course = find_course()
    if course is None:
        return [(track_folder(), None)]
    return [*([(course.exercises, None)] if course.exercises.is_dir() else []),
            (track_folder(course.keys), course.track)]


def exercise_roots() -> list[Path]:
    """The folders exercises are found in, in order (see :func:`_sources`)."""
    return [root for root, _ in _sources()]


def exercise_folders() -> dict[str, Path]:
    """Every exercise's folder by slug (its folder's name), the first root's first."""
    found: dict[str, Path] = {}
    for root, taken in _sources():
        for folder in sorted(root.iterdir()):
            if (folder / "exercise.toml").is_file() and (taken is None or folder.name in taken):
                found.setdefault(folder.name, folder)
    return found
