"""What the LMS says about the assignment a class run's grades go to: its points and, for
Canvas, its gradebook column with the assignment id (``--lms-file``); and its roster, against
which the ids and names read from a download are checked (grader.batch.layouts).

Two files are read, each the one the LMS itself writes:

    Canvas   Grades > Export (the whole gradebook): a header ``Student, ID, ..., Section`` then one
             column per assignment, named ``Title (assignment id)``; a row whose first cell
             includes "Points Possible" gives each assignment's points.
    Moodle   the assignment's "Download grading worksheet": columns ``Identifier``, ...,
             ``Maximum Grade``, the same maximum on every row.

The file is the instructor's, not a student's, but it is still only read as data: a cell that
is not a number is a clear error, never a guess.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from grader.batch.lms_names import Roster, canvas_written, moodle_written
from grader.errors import UsageError

CANVAS_COLUMN = re.compile(r"(?P<title>.*?)\s*\((?P<id>\d+)\)")  # Assignment.title_and_id
MOODLE_MAXIMUM = "Maximum Grade"


MOODLE_IDENTIFIER = re.compile(r"\D*(?P<id>\d+)\s*")  # "Participant 1002" (get_string('hiddenuser', 'assign'))


@dataclass(frozen=True)
class LmsAssignment:
    points: float | None  # None: the scores as graded
    column: str | None = None  # Canvas: the assignment's column, "Title (id)"
    roster: Roster | None = None  # who the file lists: the download's ids and names are checked against it


def _roster(kind: str, rows: list[list[str]], id_column: int, name_column: int | None) -> Roster:
    """Each row's id (Canvas's ID, the number of Moodle's "Participant N") with its name as the
    LMS's download writes it; rows without one (Canvas's Points Possible) are no one."""
    written = canvas_written if kind == "canvas" else moodle_written
    names = {}
    for row in rows:
        cell = row[id_column].strip() if len(row) > id_column else ""
        found = re.fullmatch(r"\d+", cell) if kind == "canvas" else MOODLE_IDENTIFIER.fullmatch(cell)
        if found:
            name = row[name_column] if name_column is not None and len(row) > name_column else ""
            names[found.group(0) if kind == "canvas" else found.group("id")] = written(name.strip())
    return Roster(kind, names)


def read_lms_file(path: Path, assignment: str | None, title: str) -> LmsAssignment:
    """The assignment in the Canvas export or Moodle worksheet at ``path``. For Canvas, the
    column is the one ``assignment`` names (the whole column name, its title or its id), or,
    without ``assignment``, the one titled ``title`` (the exercise's)."""
    try:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise UsageError(f"cannot read --lms-file {path}: {error}") from None
    header = rows[0] if rows else []
    if len(header) > 1 and "Student" in header[0] and "ID" in header[1]:
        return _canvas(path, header, rows[1:], assignment or title)
    if "Identifier" in header and MOODLE_MAXIMUM in header:
        found = _moodle(path, header.index(MOODLE_MAXIMUM), rows[1:])
        name = header.index("Full name") if "Full name" in header else None
        return LmsAssignment(found.points, roster=_roster("moodle", rows[1:], header.index("Identifier"), name))
    raise UsageError(f"--lms-file {path} is neither Canvas's gradebook export (Grades > Export) nor a Moodle "
                     "grading worksheet (the assignment's Download grading worksheet)")


def _points(path: Path, cell: str, what: str) -> float:
    try:
        points = float(cell.replace(",", ""))
    except ValueError:
        raise UsageError(f"--lms-file {path}: {what} is {cell.strip()!r}, not a number of points") from None
    if not 0 < points < float("inf"):
        raise UsageError(f"--lms-file {path}: {what} is {cell.strip()!r}; the assignment needs points above 0")
    return points


def _canvas(path: Path, header: list[str], body: list[list[str]], wanted: str) -> LmsAssignment:
    columns = {index: CANVAS_COLUMN.fullmatch(name.strip()) for index, name in enumerate(header)}
    assignments = {index: match for index, match in columns.items() if match}
    found = [index for index, match in assignments.items()
             if wanted.strip() in (match.group(0), match.group("title"), match.group("id"))]
    if len(found) != 1:
        names = ", ".join(repr(m.group(0)) for m in assignments.values()) or "none"
        how = "no assignment column" if not found else "several assignment columns"
        raise UsageError(f"--lms-file {path}: {how} match {wanted!r}; its assignments: {names}. "
                         "Name one with --assignment (its title, its id, or 'Title (id)')")
    index = found[0]
    points_row = next((row for row in body if row and "Points Possible" in row[0]), None)
    if points_row is None or index >= len(points_row):
        raise UsageError(f"--lms-file {path} has no Points Possible row for {header[index]!r}; export the "
                         "gradebook again from Canvas (Grades > Export > Export Entire Gradebook)")
    return LmsAssignment(_points(path, points_row[index], f"the Points Possible of {header[index]!r}"),
                         assignments[index].group(0), _roster("canvas", body, 1, 0))


def _moodle(path: Path, column: int, body: list[list[str]]) -> LmsAssignment:
    maxima = {row[column].strip() for row in body if len(row) > column and row[column].strip()}
    if len(maxima) != 1:
        raise UsageError(f"--lms-file {path}: expected one {MOODLE_MAXIMUM} on every row, found "
                         f"{sorted(maxima) or 'none'}")
    return LmsAssignment(_points(path, maxima.pop(), MOODLE_MAXIMUM))
