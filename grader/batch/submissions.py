"""What intake finds in a class download: the submissions to grade, and the entries that are not
graded (each with its reason). :func:`grader.batch.intake.find_submissions` makes them."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class Submission:
    student: str   # the key: file stem, folder name, or the LMS's id (stable across re-downloads)
    path: Path     # a readable regular file on disk
    source: str    # where it came from, as the instructor knows it: "bob/main.py", "class.zip:carol.py"
    sha256: str
    # Folders holding other students' files, which this one's child must not see.
    others: tuple[str, ...] = ()
    name: str | None = None    # the student's name, where the LMS layout gives one
    late: bool | None = None   # Canvas's LATE mark; None where the layout does not say
    # The student's modules the solution imports, each at its import path under path's folder
    # (a package's folders and __init__.py kept).
    helpers: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()     # what turning a notebook into Python changed


ProblemReason = Literal["unreadable", "too_large", "not_python", "duplicate", "no_python", "ambiguous", "unsafe",
                        "link", "special", "bad_name", "clash", "grader_error", "review"]


@dataclass(frozen=True)
class Problem:
    """An entry that is not graded, and why. ``student`` is None where no student can be named."""
    source: str
    student: str | None
    reason: ProblemReason
    message: str
    name: str | None = None


@dataclass
class Intake:
    submissions: list[Submission] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    layout: str = "files"   # files | folders | canvas | moodle
    notes: list[str] = field(default_factory=list)  # what was left aside on purpose (Moodle online text)

    @property
    def students(self) -> list[str]:
        """Every student named by the input, graded or not, sorted."""
        named = {s.student for s in self.submissions} | {p.student for p in self.problems if p.student}
        return sorted(named)

    @property
    def names(self) -> dict[str, str]:
        """The LMS's name for each student key, where the layout gives one."""
        found = {p.student: p.name for p in self.problems if p.student and p.name}
        found.update({s.student: s.name for s in self.submissions if s.name})
        return found
