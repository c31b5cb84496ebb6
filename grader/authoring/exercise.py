"""The exercise format: one folder per exercise under ``exercises/``.

    exercise.toml   metadata: slug, title, version, function, devices, limits, points
                    (``signature`` is derived from checks.py; if given, it must agree)
    statement.md    the task for students (why it matters, the task, the pitfalls)
    starter.py      what ``jaxgrade start`` writes; the task is its docstring
    reference.py    a correct solution (must get full marks)
    checks.py       SIGNATURE (Signature: the parameters and the return structure), PROBE
                    (a dict of arguments structure is observed on) and CHECKS (a list of
                    checks), all built from grader.authoring
    wrong/*.py      known-wrong variants; the first line says ``# expect: CATEGORY``
    right/*.py      other correct solutions that must also get full marks

An author's mistake is an :class:`ExerciseError` whose message names the file and what to
change, never a traceback: ``grader.authoring.lint.exercise_problems`` lists everything ``jaxgrade validate`` and
the test suite require of an exercise (docs/authoring.md states the same list).

The answer key (docs/keys.md) is ``reference.py``, ``right/`` and ``wrong/``: the wheel and the
student pack carry the rest, and an exercise without its key still loads and grades its checks
(``jaxgrade check``); the instructor's commands (validate, grade, the autograder exports) need
the key and say where to get it (:func:`require_key`).

Optional tables in exercise.toml: ``[visibility]`` maps a check id to visible, after_due_date,
after_published or hidden (default visible); ``[release]`` holds ``due`` (a date-time with a UTC
offset) and ``published`` (see grader/release.py and grader/report/visibility.py).
"""
from __future__ import annotations

import difflib
import hashlib
import importlib.util
import os
import re
import sys
import tomllib
import traceback
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.authoring.course import CARRIED_HELPERS, exercise_folders, exercise_roots, find_course, helper_packages
from grader.errors import ExerciseError
from grader.outcome import CATEGORIES
from grader.paths import data_folder
from grader.sandbox.limits import Limits
from grader.release import VISIBILITIES, Release, parse_release

if TYPE_CHECKING:  # the check library (and Hypothesis) loads with an exercise's checks.py
    from grader.arguments import Signature  # NumPy: imported with the checks, after `jaxgrade check` spawned its child
    from grader.checks.base import Check

_WHAT = {"SIGNATURE": "grader.arguments.Signature({name: Array(...)}, returns=...)",
         "PROBE": "a dict from parameter name to the argument structure is observed on",
         "CHECKS": "a list of checks from grader.authoring"}
EXPECT = re.compile(r"^#\s*expect:\s*(\w+)", re.MULTILINE)
# What of an exercise folder only the instructor and the autograder hold (docs/keys.md):
# pyproject.toml's exclude-package-data keeps them out of the wheel.
KEY_PARTS = ("reference.py", "right", "wrong")

def hidden_from_child(exercise: "Exercise") -> tuple[str, ...]:
    """What a grading's child must not see of the exercises: all of them (references, checks),
    this one's folder (it may lie elsewhere: an exported pack's) and its checks' helpers."""
    return (*map(str, exercise_roots()), str(exercise.directory), *map(str, exercise.helpers))


@dataclass(frozen=True)
class Variant:
    path: Path
    expect: str | None  # the category a wrong variant must fail; None for right ones


@dataclass(frozen=True)
class Exercise:
    directory: Path
    slug: str
    title: str
    version: str
    function: str
    devices: int
    limits: Limits
    points: dict[str, float] = field(hash=False)
    visibility: dict[str, str] = field(default_factory=dict, hash=False)  # check id -> visibility
    release: Release = Release()
    helpers: tuple[Path, ...] = ()  # the helper packages its checks.py may import (grader.authoring.course)

    @property
    def statement(self) -> str:
        return (self.directory / "statement.md").read_text()

    @property
    def starter(self) -> Path:
        return self.directory / "starter.py"

    @property
    def reference(self) -> Path:
        return self.directory / "reference.py"

    @property
    def has_key(self) -> bool:
        """Whether the answer key is here: the reference (``pip install jaxgrade`` carries none)."""
        return self.reference.is_file()

    stated_signature: str | None = None  # exercise.toml's signature, checked against SIGNATURE

    @cached_property
    def _checks_module(self) -> Any:
        from grader.arguments import Signature
        path = self.directory / "checks.py"
        spec = importlib.util.spec_from_file_location(f"jaxgrade_exercise_{self.slug}", path)
        if spec is None or spec.loader is None:
            raise ExerciseError(f"{path} cannot be imported")
        module = importlib.util.module_from_spec(spec)
        try:
            for package in self.helpers:
                _import_helpers(package)
            spec.loader.exec_module(module)
        except ExerciseError as error:
            raise ExerciseError(f"{path}: {error}") from None
        except Exception as error:  # an author's mistake, said in one line with where it is
            line = next((f.lineno for f in reversed(traceback.extract_tb(error.__traceback__))
                         if f.filename == str(path)), None)
            where = f"{path}, line {line}" if line else str(path)
            raise ExerciseError(f"{where}: {type(error).__name__}: {error}") from None
        for name, kind in (("SIGNATURE", Signature), ("PROBE", dict), ("CHECKS", (list, tuple))):
            if not isinstance(getattr(module, name, None), kind):
                raise ExerciseError(f"{path} must define {name} ({_WHAT[name]})")
        return module

    @property
    def checks(self) -> list["Check"]:
        # Defaults that name the function (LoadsFunction's title) are filled in here, where it is known.
        module = self._checks_module
        checks = [c.for_function(self.function, module.SIGNATURE) if hasattr(c, "for_function") else c
                  for c in module.CHECKS]
        ids = [getattr(c, "id", None) for c in checks]
        if len(set(ids)) != len(ids):
            raise ExerciseError(f"{self.slug}: check ids repeat: {ids}")
        if set(ids) != set(self.points):
            raise ExerciseError(f"{self.slug}: exercise.toml [points] names {sorted(self.points)}, "
                                f"checks.py defines {sorted(map(str, ids))}; make them the same")
        return checks

    @property
    def signature(self) -> Signature:
        signature = self._checks_module.SIGNATURE
        if self.stated_signature is not None and self.stated_signature != signature.text(self.function):
            raise ExerciseError(f"{self.directory / 'exercise.toml'}: signature = {self.stated_signature!r} disagrees "
                                f"with checks.py's SIGNATURE, {signature.text(self.function)!r}; remove the line "
                                "(it is derived) or make them the same")
        return signature

    @property
    def signature_text(self) -> str:
        return self.signature.text(self.function)

    @property
    def probe(self) -> dict[str, Any]:
        probe = dict(self._checks_module.PROBE)
        problem = self.signature.problem(probe, "PROBE")
        if problem:
            raise ExerciseError(f"{self.directory / 'checks.py'}: {problem}")
        return probe

    def visibility_of(self, check_id: str) -> str:
        return self.visibility.get(check_id, "visible")

    @property
    def max_score(self) -> float:
        return float(sum(self.points.values()))

    @cached_property
    def fingerprint(self) -> str:
        """Changes whenever any file of the exercise changes (so results keyed by it go stale)."""
        digest = hashlib.sha256()
        for name, path in self.files():
            digest.update(name.encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()[:16]

    def files(self) -> list[tuple[str, Path]]:
        """Every file of the exercise, by its name in a copy of the folder: the folder's own, and
        its checks' helpers as an export carries them (``_helpers/NAME/...``), so that a copy
        (an export, a Dask worker's) names the same files as the course it came from."""
        def under(folder: Path, prefix: str, skip: tuple[str, ...] = ()) -> list[tuple[str, Path]]:
            return [(prefix + path.relative_to(folder).as_posix(), path) for path in sorted(folder.rglob("*"))
                    if path.is_file() and "__pycache__" not in path.parts
                    and path.relative_to(folder).parts[0] not in skip]
        found = under(self.directory, "", (CARRIED_HELPERS,))
        for package in self.helpers:
            found += under(package, f"{CARRIED_HELPERS}/{package.name}/")
        return found

    def variants(self, kind: str) -> list[Variant]:
        """``wrong`` or ``right`` variants, in name order."""
        found = []
        for path in sorted((self.directory / kind).glob("*.py")):
            match = EXPECT.search(path.read_text())
            if kind == "wrong" and (match is None or match.group(1) not in CATEGORIES):
                raise ExerciseError(f"{path}: the first line must be '# expect: CATEGORY' with one of {CATEGORIES}")
            found.append(Variant(path, match.group(1) if kind == "wrong" and match else None))
        return found


# Exercises kept loaded, by folder and the stat of every file in it: None (the default) loads
# each time; grader.warm.service keeps them, so a second check reuses the checks module, the
# inputs drawn for a seed and the oracles' answers, as a class run reuses them between
# submissions. Any file of the folder changed (size, mtime, a file added or removed): loaded again.
_KEPT: dict[tuple[str, tuple[tuple[str, int, int], ...]], "Exercise"] | None = None


def keep_loaded() -> None:
    """From now on, this process reuses an exercise loaded before while its files are unchanged."""
    global _KEPT
    if _KEPT is None:
        _KEPT = {}


def _files_of(directory: Path) -> tuple[tuple[str, int, int], ...]:
    found = []
    for root, folders, files in os.walk(directory):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(files):
            info = os.stat(os.path.join(root, name))
            found.append((os.path.join(root, name), info.st_size, info.st_mtime_ns))
    return tuple(found)


def load_exercise(directory: Path) -> Exercise:
    if _KEPT is None:
        return _load_exercise(directory)
    helpers = helper_packages(Path(directory))
    key = (f"{directory}\0{Path(directory).resolve()}", sum(map(_files_of, (directory, *helpers)), ()))
    if key not in _KEPT:
        if len(_KEPT) >= 64:
            _KEPT.clear()
        _KEPT[key] = _load_exercise(directory)
    return _KEPT[key]


def _import_helpers(package: Path) -> None:
    """Make the helper package ``package`` importable by its folder's name, from that folder
    alone (not its parent, which holds the course's keys too), replacing one of that name an
    earlier course registered; never one that shadows a module installed here."""
    name = package.name
    known = sys.modules.get(name)
    if known is not None and getattr(known, "__jaxgrade_helpers__", None) == str(package):
        return
    installed = importlib.util.find_spec(name) if known is None else None
    elsewhere = installed is not None and Path(installed.origin or "").resolve().parent != package.resolve()
    if elsewhere or known is not None and not hasattr(known, "__jaxgrade_helpers__"):
        raise ExerciseError(f"helpers package {package}: {name!r} is the name of an installed module, which it would "
                            "hide; rename the folder (and the imports of it in checks.py)")
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]
    spec = importlib.util.spec_from_file_location(name, package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    assert spec is not None and spec.loader is not None  # a file location always has a spec and loader
    module = importlib.util.module_from_spec(spec)
    module.__jaxgrade_helpers__ = str(package)  # type: ignore[attr-defined]
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def _load_exercise(directory: Path) -> Exercise:
    meta_path = directory / "exercise.toml"
    try:
        meta = tomllib.loads(meta_path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ExerciseError(f"{meta_path}: {error}") from None
    try:
        limits = Limits(**{k: v for k, v in meta.get("limits", {}).items()})
        return Exercise(directory=directory, slug=meta["slug"], title=meta["title"], version=str(meta["version"]),
                        function=meta["function"], stated_signature=meta.get("signature"),
                        devices=int(meta.get("devices", 8)),
                        limits=limits, points={k: float(v) for k, v in meta["points"].items()},
                        visibility=_visibility(meta, meta_path),
                        release=parse_release(meta.get("release", {}), str(meta_path)),
                        helpers=helper_packages(directory))
    except (KeyError, TypeError) as error:
        raise ExerciseError(f"{meta_path}: missing or wrong field {error}") from None
    except ValueError as error:
        raise ExerciseError(str(error)) from None


def _visibility(meta: dict[str, Any], meta_path: Path) -> dict[str, str]:
    table = meta.get("visibility", {})
    for check_id, value in table.items():
        if check_id not in meta["points"]:
            raise ValueError(f"{meta_path}: [visibility] names {check_id!r}, which is not a check in [points]")
        if value not in VISIBILITIES:
            raise ValueError(f"{meta_path}: [visibility] {check_id!r} = {value!r}; "
                             f"use one of {', '.join(VISIBILITIES)}")
    return dict(table)


def require_key(exercises: list[Exercise], doing: str) -> None:
    """Raise an ExerciseError saying where the answer keys are when any of ``exercises`` lacks
    its own: ``doing`` (validating, grading a class, an autograder export) needs the reference."""
    missing = [e for e in exercises if not e.has_key]
    if not missing:
        return
    names = ", ".join(e.slug for e in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    head = f"{doing} needs the answer key (reference.py, right/, wrong/) of {names}, and {missing[0].directory} has none"
    if missing[0].directory.parent != data_folder("exercises"):  # a course's or a pack's: its author's to write
        raise ExerciseError(f"{head}: write its reference.py there (docs/authoring.md)")
    raise ExerciseError(
        f"{head}: pip install jaxgrade carries what students see of the track, not its keys. The track's keys are "
        "in jaxgrade's source repository: clone it, then add  keys = \"CHECKOUT/exercises\"  to the course's "
        "jaxgrade.toml, or give  --keys CHECKOUT/exercises  (docs/keys.md)")


def all_exercises() -> list[Exercise]:
    return [load_exercise(d) for d in exercise_folders().values()]


def own_exercises() -> list[Exercise]:
    """What ``jaxgrade validate`` proves without slugs: in a course, the course's own exercises
    (the track's are proven where they are written); elsewhere every exercise."""
    course = None if "JAXGRADE_EXERCISES" in os.environ else find_course()
    return [e for e in all_exercises() if course is None or e.directory.parent == course.exercises]


def find_exercise(slug: str) -> Exercise:
    """The exercise named ``slug``; an ExerciseError for an unknown one, proposing the close
    names (a misspelling: "did you mean named_sharding_replicated?"), else listing them all."""
    folders = exercise_folders()
    directory = folders.get(slug)
    if directory is None:
        known = list(folders)
        close = difflib.get_close_matches(slug, known, n=3, cutoff=0.6)
        if close:
            raise ExerciseError(f"unknown exercise {slug!r}: did you mean {' or '.join(close)}? "
                                "(jaxgrade list shows them all)")
        raise ExerciseError(f"unknown exercise {slug!r}; known exercises: {', '.join(known) or 'none'}")
    return load_exercise(directory)


def exercises_for_source(source: str) -> list[Exercise]:
    """The exercises whose function the file defines (read as text: never executed here)."""
    defined = set(re.findall(r"^\s*def\s+(\w+)\s*\(", source, re.MULTILINE))
    return [e for e in all_exercises() if e.function in defined]


def exercise_for_source(source: str) -> Exercise | None:
    """The one exercise whose function the file defines; None for none or several."""
    matches = exercises_for_source(source)
    return matches[0] if len(matches) == 1 else None
