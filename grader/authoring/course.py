"""Where a course's exercises come from: the one module that decides which exercise folders
jaxgrade sees, and in what order (docs/course.md).

- ``JAXGRADE_EXERCISES`` (folders separated by ``os.pathsep``), when set, replaces the rest: an
  exported autograder or pack points it at its one exercise, an instructor at a checkout's keys;
- else the course: ``--course DIR`` (:func:`choose_course`), or the first folder from the working
  one upwards holding ``jaxgrade.toml`` or a ``pyproject.toml`` with ``[tool.jaxgrade]`` (as pytest
  finds its rootdir). Its own exercises folder comes first (a slug there hides the track's), then
  the track jaxgrade ships (grader.paths), all of it or the slugs ``track`` chooses;
- outside any course, the track alone.

What an exercise folder holds, and loading one, is grader.authoring.exercise's.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.errors import ExerciseError
from grader.paths import data_folder

COURSE_FILE = "jaxgrade.toml"
_COURSE_KEYS = {"exercises": "the course's exercises folder, relative to the course (default \"exercises\")",
                "track": "the track's exercises the course uses: \"all\" (default), \"none\" or a list of slugs",
                # a student's folder (the pack's jaxgrade.toml): what `pytest` grades (grader.pytest_plugin)
                "solution": "the solution file pytest grades, relative to the folder",
                "exercise": "the exercise that solution solves (default: the one whose function it defines)"}
# ``jaxgrade --course DIR``: the course for this command, in place of the one found from the
# working folder (grader.cli sets it per command, and the warm service per request).
_chosen_course: Path | None = None


@dataclass(frozen=True)
class Course:
    """A course folder (docs/course.md): its own exercises beside the track's."""
    exercises: Path
    track: frozenset[str] | None  # the track's exercises it uses; None: all


def choose_course(folder: Path | None) -> None:
    """Use the course in ``folder`` (None: the one found from the working folder) from now on."""
    global _chosen_course
    _chosen_course = None if folder is None else Path(folder).resolve()


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
    track = table.get("track", "all")
    if track in ("all", "none"):
        return Course(exercises, None if track == "all" else frozenset())
    if not (isinstance(track, list) and all(isinstance(s, str) for s in track)):
        raise ExerciseError(f"{path}: track = {track!r}; give \"all\", \"none\" or a list of the track's slugs")
    known = {d.name for d in data_folder("exercises").iterdir() if (d / "exercise.toml").is_file()}
    strange = sorted(set(track) - known)
    if strange:
        raise ExerciseError(f"{path}: track names {', '.join(strange)}, which the track does not have; "
                            f"it has {', '.join(sorted(known))}")
    return Course(exercises, frozenset(track))


def _sources() -> list[tuple[Path, frozenset[str] | None]]:
    """The folders exercises are found in, in order (a slug in an earlier one hides a later
    one's), each with the slugs taken from it (None: all): the folders ``JAXGRADE_EXERCISES``
    lists (separated by ``os.pathsep``; they replace the rest: an exported autograder or pack
    points it at its exercise, an instructor at a checkout's keys, docs/keys.md), else the
    course's exercises folder, then the track jaxgrade ships (see grader.paths), all of it or
    the course's choice."""
    if "JAXGRADE_EXERCISES" in os.environ:
        roots = [Path(p) for p in os.environ["JAXGRADE_EXERCISES"].split(os.pathsep) if p]
        missing = [str(r) for r in roots if not r.is_dir()]
        if missing or not roots:
            raise ExerciseError(f"JAXGRADE_EXERCISES names {', '.join(missing) or 'no folder'}, which is not a "
                                f"folder: set it to folders of exercises (separated by {os.pathsep!r}) or unset it")
        return [(root, None) for root in roots]
    course = find_course()
    track = data_folder("exercises")
    if course is None:
        return [(track, None)]
    return [*([(course.exercises, None)] if course.exercises.is_dir() else []), (track, course.track)]


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
