"""jaxgrade's pytest plugin (the ``pytest11`` entry point ``jaxgrade``): ``pytest`` runs an
exercise's checks on a solution, one test item per check.

It is active only where something says which exercise a solution solves:

- ``pytest --jaxgrade FILE[::SLUG]`` (repeatable; without ``::SLUG`` the exercise is the one
  whose function the file defines, as for ``jaxgrade check``), or
- ``jaxgrade.toml``, or ``[tool.jaxgrade]`` in ``pyproject.toml``, in the folder pytest was
  started in or one above it up to the rootdir: ``solution = "x.py"``, optional ``exercise =
  "SLUG"`` and ``exercises = "FOLDER"`` (where the exercise's folder is, instead of the ones
  jaxgrade ships: a student pack's own ``.jaxgrade/exercises``, which ``jaxgrade export
  student`` writes this file for).

Elsewhere it does nothing, and at load it imports only pytest and the standard library: the
grader, JAX and NumPy are imported when a solution is collected, so pytest is not slowed in a
folder without jaxgrade configuration.

The solution file is collected by this plugin alone (never imported by pytest: student code
runs only in the grader's sandboxed child). Its items are the checks a student's report shows
(``grader.shown_checks``: hidden ones are left out, as ``jaxgrade check`` withholds them), named by
check id (``solution.py::value.random_vectors``), their titles and categories matched by ``-k``.
The first item set up grades the solution once, through the library call ``jaxgrade check`` uses
(``grader.grade``: the same sandbox, seed 0); every item reads that one report. A check passed,
failed or skipped is the item's outcome; a check the grader could not judge (status ``error``)
and a solution that cannot be graded at all are pytest errors. The failure text is the report's
explanation of the check; its points go to ``item.user_properties`` (``points``, ``max_points``),
so ``--junitxml`` carries them. Under pytest-xdist every worker collects the items and the first
item a worker runs grades the solution for that worker: one grading per worker.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generator, Iterator

import pytest

if TYPE_CHECKING:
    from grader.authoring.exercise import Exercise

CONFIG_FILE = "jaxgrade.toml"
_KEYS = {"solution", "exercise", "exercises", "track", "helpers"}  # a course's settings too (grader.authoring.course)


@dataclass(frozen=True)
class Solution:
    path: Path  # resolved
    exercise: str | None  # the slug; None: the exercise whose function the file defines
    named_by: str  # how its exercise is named there, for a message saying how to name it


@dataclass(frozen=True)
class Settings:
    solutions: tuple[Solution, ...]
    exercises: Path | None  # the folder of exercises a configuration names


_SETTINGS = pytest.StashKey[Settings]()
_ENVIRON = pytest.StashKey[dict[str, str | None]]()  # what configure changed, restored at unconfigure
_GRADED = pytest.StashKey[list["SolutionFile"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jaxgrade", "jaxgrade: run an exercise's checks on a solution")
    group.addoption("--jaxgrade", action="append", default=[], metavar="FILE[::SLUG]",
                    help="grade FILE against exercise SLUG (default: the one whose function FILE defines), "
                         "one test per check; overrides jaxgrade.toml's solution")


def _table(folder: Path) -> tuple[dict[str, Any], Path] | None:
    """The jaxgrade configuration a folder holds, and its file; None where it holds none."""
    own, project = folder / CONFIG_FILE, folder / "pyproject.toml"
    if not (own.is_file() or project.is_file()):
        return None
    import tomllib  # pytest imported it if it read that pyproject.toml
    try:
        if own.is_file():
            return tomllib.loads(own.read_text()), own
        if project.is_file():
            text = project.read_text()
            table = tomllib.loads(text).get("tool", {}).get("jaxgrade") if "tool.jaxgrade" in text else None
            return (table, project) if isinstance(table, dict) else None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise pytest.UsageError(f"jaxgrade: cannot read {own if own.is_file() else project}: {error}") from None
    return None


def _found(config: pytest.Config) -> tuple[dict[str, Any], Path] | None:
    """The first configuration from the folder pytest started in up to its rootdir."""
    start, root = config.invocation_params.dir, config.rootpath
    folders = [start, *start.parents] if start.is_relative_to(root) else [root]
    for folder in folders:
        found = _table(folder)
        if found is not None:
            return found
        if folder == root:
            break
    return None


def _text(table: dict[str, Any], key: str, where: Path) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise pytest.UsageError(f'jaxgrade: {where}: {key} must be a path or name in quotes, e.g. {key} = "..."')
    return value


def _settings(config: pytest.Config) -> Settings | None:
    found = _found(config)
    table, where = found if found is not None else ({}, None)
    if where is not None and set(table) - _KEYS:
        raise pytest.UsageError(f"jaxgrade: {where}: unknown key {sorted(set(table) - _KEYS)[0]!r}; "
                                f"the keys are {', '.join(sorted(_KEYS))}")
    exercises = _text(table, "exercises", where) if where is not None else None
    folder = where.parent if where is not None else config.invocation_params.dir
    solutions = []
    for given in config.getoption("jaxgrade"):
        file, _, slug = given.partition("::")
        solutions.append(_solution(config.invocation_params.dir / file, slug or None, f"--jaxgrade {given}",
                                   "--jaxgrade FILE::SLUG"))
    if not solutions and where is not None:
        file = _text(table, "solution", where)
        if file is None:
            raise pytest.UsageError(f'jaxgrade: {where} names no solution; add solution = "your_file.py"')
        solutions.append(_solution(folder / file, _text(table, "exercise", where), f"{where.name}'s solution",
                                   f'exercise = "SLUG" in {where.name}'))
    if not solutions:
        return None
    return Settings(tuple(solutions), None if exercises is None else (folder / exercises).resolve())


def _solution(path: Path, slug: str | None, what: str, named_by: str) -> Solution:
    if not path.is_file():
        raise pytest.UsageError(f"jaxgrade: no such file: {path} ({what}); give the path to your solution, "
                                f"a .py file or a notebook")
    return Solution(path.resolve(), slug, named_by)


def pytest_configure(config: pytest.Config) -> None:
    settings = _settings(config)
    if settings is None:
        return
    config.stash[_SETTINGS] = settings
    config.stash[_GRADED] = []
    config.addinivalue_line("markers", "jaxgrade: a check of a jaxgrade exercise, run on a solution")
    if settings.exercises is not None:  # as the pack's check script does: its exercise, no reference to cache from
        config.stash[_ENVIRON] = {name: os.environ.get(name) for name in ("JAXGRADE_EXERCISES", "JAXGRADE_CACHE")}
        os.environ["JAXGRADE_EXERCISES"] = str(settings.exercises)
        os.environ.setdefault("JAXGRADE_CACHE", "off")
    for solution in settings.solutions:  # collected even where the arguments or testpaths do not reach it
        if not any(_covers(config.invocation_params.dir / arg.split("::")[0], solution.path) for arg in config.args):
            config.args.append(str(solution.path))


def _covers(arg: Path, solution: Path) -> bool:
    arg = arg.resolve()
    return arg == solution or arg in solution.parents


def pytest_unconfigure(config: pytest.Config) -> None:
    for name, value in config.stash.get(_ENVIRON, {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Generator[None, list[Any], list[Any]]:
    collected = yield
    settings = parent.config.stash.get(_SETTINGS, None)
    if settings is None:
        return collected
    resolved = file_path.resolve()
    for solution in settings.solutions:
        if solution.path == resolved:  # instead of a Module pytest would import it as
            return [SolutionFile.from_parent(parent, path=file_path, solution=solution)]
    return collected


class SolutionFile(pytest.File):
    """A solution: its checks as items, and the one grading they all read."""

    def __init__(self, *, solution: Solution, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.solution = solution
        self.shown = os.path.relpath(self.path, self.config.invocation_params.dir)
        self.exercise: Exercise | None = None
        self._graded: dict[str, Any] | str | None = None  # the report's view, or why it cannot be had

    def collect(self) -> Iterator[CheckItem]:
        import grader
        try:
            converted = grader.read_submission(self.path, self.shown)
            self.exercise = grader.exercise_of(converted, self.solution.exercise, self.shown,
                                               option=self.solution.named_by,
                                               example=f"pytest --jaxgrade {{file}}::{{slug}}")
            checks = grader.shown_checks(self.exercise)
        except (grader.UsageError, grader.ExerciseError) as error:
            raise self.CollectError(f"jaxgrade: {error}") from None
        for check in checks:
            yield CheckItem.from_parent(self, name=check.id, title=check.title, category=check.category,
                                        points=self.exercise.points[check.id])

    def graded(self) -> dict[str, Any]:
        """The student's view of the report (``grader.explained``), graded the first time."""
        if self._graded is None:
            self._graded = self._grade()
            self.config.stash[_GRADED].append(self)
        if isinstance(self._graded, str):
            pytest.fail(self._graded, pytrace=False)
        return self._graded

    def score_line(self) -> str | None:
        """The score and verdict, once graded."""
        if not isinstance(self._graded, dict):
            return None
        return f"jaxgrade: {self.shown}: score {self._graded['score']:g}/{self._graded['max_score']:g} · " \
               f"{self._graded['verdict']}"

    def _grade(self) -> dict[str, Any] | str:
        import grader
        assert self.exercise is not None  # collected first
        try:
            report = grader.grade(self.exercise, self.path, display_path=self.shown)
        except (grader.UsageError, grader.ExerciseError) as error:  # e.g. the file went away since collection
            return f"jaxgrade: {error}"
        return grader.explained(report, stage=self.exercise.release.stage())


class CheckItem(pytest.Item):
    """One check of the exercise, as the solution's report says it went."""

    def __init__(self, *, title: str, category: str, points: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.title = title
        self.extra_keyword_matches.update((title, category))
        self.add_marker("jaxgrade")
        self.user_properties.append(("max_points", points))

    def _check(self) -> dict[str, Any]:
        assert isinstance(self.parent, SolutionFile)
        report = self.parent.graded()
        found = next((c for c in report["checks"] if c["id"] == self.name), None)
        if found is None:
            pytest.fail(f"jaxgrade: the report has no check {self.name} ({report['verdict']})", pytrace=False)
        return found

    def setup(self) -> None:
        check = self._check()
        self.user_properties.append(("points", check["score"]))
        if check["status"] == "error":  # the grader's fault, never the solution's: a pytest error
            pytest.fail(check["text"], pytrace=False)

    def runtest(self) -> None:
        check = self._check()
        if check["status"] == "skipped":
            pytest.skip(check["message"])
        if check["status"] != "passed":
            pytest.fail(check["text"], pytrace=False)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.name}: {self.title}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Each graded solution's score, as ``jaxgrade check`` ends its report."""
    for solution in terminalreporter.config.stash.get(_GRADED, []):
        line = solution.score_line()
        if line is not None:
            terminalreporter.write_line(line)
