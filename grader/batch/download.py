"""A class download being read: its files, read once each, the entries that cannot be graded,
and each student's solution picked among their files (what every LMS layout of
:mod:`grader.batch.layouts` does once it knows whose files are whose)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable, NamedTuple

from grader.batch.lms_names import Owner
from grader.report.safe_text import shown_name
from grader.batch.submissions import Problem
from grader.batch.tree import Tree, read_file
from grader.errors import NotebookError
from grader.source import Converted, defines, modules_needed, python_of

# A solution's modules: (its import path beside the solution, the entry holding it).
Helpers = tuple[tuple[PurePosixPath, PurePosixPath], ...]


def python(path: PurePosixPath, data: bytes) -> Converted | NotebookError:
    """What the file stands for as Python (a notebook's code cells), or why it cannot be read so."""
    try:
        return python_of(data, path.suffix)
    except NotebookError as error:
        return error


@dataclass
class Candidate:
    path: PurePosixPath
    owner: Owner
    order: tuple[int, int] = (0, 0)   # (resubmission, attachment id): the latest is the largest
    family: str = ""                  # the display name without its resubmission number


class Found(NamedTuple):
    """A file to grade: whose, where in the download, its bytes, and its modules."""
    owner: Owner
    path: PurePosixPath
    data: bytes
    helpers: Helpers


class Download:
    """``tree`` below any wrapping folder, shown as ``prefix`` + path (``class.zip:`` for a zip);
    ``function``: the exercise's function, which picks the solution among a student's files.
    ``problems`` starts with what could not even be placed in the tree."""

    def __init__(self, tree: Tree, prefix: str, function: str | None, problems: list[Problem]) -> None:
        self.tree, self.prefix, self.function = tree, prefix, function
        self.problems = problems
        self.found: list[Found] = []
        self.notes: list[str] = []  # what was left aside on purpose
        self._reads: dict[PurePosixPath, tuple[bytes | None, tuple[str, str] | None]] = {}

    def read(self, path: PurePosixPath) -> tuple[bytes | None, tuple[str, str] | None]:
        if path not in self._reads:
            real = self.tree.files.get(path)
            self._reads[path] = (None, self.tree.refused.get(path, ("unreadable", "could not be read"))) \
                if real is None else read_file(real)
        return self._reads[path]

    def shown(self, path: PurePosixPath) -> str:
        return self.prefix + shown_name(path.as_posix())

    def problem(self, path: PurePosixPath, owner: Owner, reason: str, message: str) -> None:
        self.problems.append(Problem(self.shown(path), owner.student, reason, message, owner.name))

    def consider(self, owner: Owner, path: PurePosixPath, helpers: Helpers = ()) -> None:
        data, refusal = self.read(path)
        if data is None:
            reason, message = refusal or ("unreadable", "could not be read")
            self.problem(path, owner, reason, message)
        elif isinstance(converted := python(path, data), NotebookError):
            self.problem(path, owner, "unreadable", f"this .ipynb file is {converted}")
        else:  # an empty file too: the load check says what is missing, as `check` does
            self.found.append(Found(owner, path, data, helpers))

    def choose(self, owner: Owner, where: PurePosixPath, candidates: list[Candidate], entries: list[PurePosixPath],
               describe: Callable[[PurePosixPath], str]) -> None:
        """Grade one of a student's ``.py`` or ``.ipynb`` files: the only one, else the one that
        defines the function (the latest resubmission of it, where an LMS numbers them); the
        student's other ``.py`` files that it imports are its helper modules."""
        tree, function = self.tree, self.function
        for path in entries:
            if path in tree.refused and path.suffix != ".py":
                self.problem(path, owner, *tree.refused[path])  # listed, never silently dropped
        if not candidates:
            if any(path in tree.refused for path in entries):
                return  # the refused entries, reported above or below, say what happened
            what = ", ".join(describe(p) for p in entries[:5]) or "nothing"
            self.problem(where, owner, "no_python", f"no .py file (the submission holds {what})")
            return
        unique: dict[str, Candidate] = {}
        for candidate in candidates:  # a link to the student's own file is that file, not a second one
            real = tree.files.get(candidate.path)
            unique.setdefault(os.path.realpath(real) if real is not None else f"\0{candidate.path}", candidate)
        candidates = list(unique.values())
        readable = [c for c in candidates if self.read(c.path)[0] is not None]
        for candidate in candidates:
            if candidate not in readable and len(candidates) > 1:
                self.problem(candidate.path, owner,
                             *(self.read(candidate.path)[1] or ("unreadable", "could not be read")))
        if len(candidates) == 1 or len(readable) == 1:
            chosen = (readable or candidates)[0].path
            self.consider(owner, chosen, self._helpers_of(chosen, readable))
            return
        if not readable:
            return
        defining = [c for c in readable if function is not None and
                    isinstance(converted := python(c.path, self.read(c.path)[0] or b""), Converted)
                    and defines(converted.text, function)]
        if len(defining) == 1:
            self.consider(owner, defining[0].path, self._helpers_of(defining[0].path, readable))
            return
        if len(defining) > 1 and len({c.family for c in defining}) == 1 and any(c.order != (0, 0) for c in defining):
            latest = max(defining, key=lambda c: c.order).path  # resubmissions of one file: the latest
            self.consider(owner, latest, self._helpers_of(latest, readable, frozenset(c.path for c in defining)))
            return
        listed = ", ".join(describe(c.path) for c in readable[:6])
        why = f"several define {function}()" if defining else f"none defines {function}()"
        self.problem(where, owner, "ambiguous", f"several .py files ({listed}) and {why}: keep only the solution, "
                                                "then grade again")

    def _helpers_of(self, chosen: PurePosixPath, readable: list[Candidate],
                    skip: frozenset[PurePosixPath] = frozenset()) -> Helpers:
        """The modules ``chosen`` imports among the student's ``readable`` files, each at its import
        path beside it: its path in the student's folder, or for Canvas its display name (the
        latest upload of it)."""
        own: dict[PurePosixPath, Candidate] = {}
        for c in readable:
            if c.path == chosen or c.path in skip or c.path.suffix != ".py" or chosen.parent not in c.path.parents:
                continue
            at = PurePosixPath(c.family) if c.family else c.path.relative_to(chosen.parent)
            if at not in own or own[at].order < c.order:
                own[at] = c
        main = python(chosen, self.read(chosen)[0] or b"")
        if not own or not isinstance(main, Converted):
            return ()
        needed = modules_needed(PurePosixPath(chosen.name), main.text,
                                lambda at: (self.read(own[at].path)[0] or b"").decode("utf-8", "surrogateescape")
                                if at in own else None)
        return tuple((at, own[at].path) for at in needed)
