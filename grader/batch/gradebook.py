"""The gradebooks a class run writes: ``gradebook.csv`` always, and on request the CSV that
Canvas's or Moodle's grade import reads.

``gradebook.csv``: one row per student, the columns a spreadsheet or a script wants.

    student, [name, late,] score, max_score, status, <one column per check: points scored>, source, sha256,
    version, fingerprint, note

``status`` is the report's (``passed``, ``failed``, ``error``) or ``not_graded`` for an entry
the intake could not grade (the ``note`` says why; its score is empty, not 0, so a missing
file is not mistaken for a graded zero). ``name`` and ``late`` are there only for a Canvas
or Moodle download (the LMS's name for the student, and Canvas's LATE mark). ``version`` and
``fingerprint``, on each graded row, say what it was graded against: exercise.toml's version (the
one a course pins) and the digest of the exercise's files (which a result's reuse is keyed by).

``gradebook-canvas.csv`` (``--gradebook canvas``): what Canvas's Gradebook "Import" accepts
(app/models/gradebook_importer.rb): ``Student, ID, SIS User ID, SIS Login ID, Section`` then
one assignment column, a "Points Possible" row, one row per student. ``gradebook-moodle.csv``
(``--gradebook moodle``): the assignment's "Upload grading worksheet" format
(mod/assign/feedback/offline): ``Identifier`` ("Participant N"), ``Grade``,
``Last modified (grade)`` and ``Feedback comments``. docs/formats.md says what each column
holds and why. Both LMS files give the score out of the LMS assignment's points (``points``,
default the exercise's maximum): Moodle skips a grade above its maximum without a word.

Every cell that holds text from a student goes through :func:`grader.report.safe_text.for_csv`
(no control characters, no formulas). Every file here is replaced atomically and created
readable by its owner only.
"""
from __future__ import annotations

import csv
import html
import io
import os
import re
import threading
from pathlib import Path
from typing import Any, Collection, Iterable, Sequence

from grader.batch.submissions import Problem
from grader.report.safe_text import for_csv

FIXED = ("student", "score", "max_score", "status")
LMS_COLUMNS = ("name", "late")
TRAILING = ("source", "sha256", "version", "fingerprint", "note")
GRADEBOOK_FORMATS = ("canvas", "moodle")

# Canvas: the importer finds its header by these (row[0] includes "Student", row[1] "ID", and the
# last student-information column includes "Section"); a row whose first cell includes
# "Points Possible" sets the assignment's points.
CANVAS_HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS_ROW = "Points Possible"
# Moodle: the worksheet importer requires these three column names (get_string('recordid',
# 'assign'), get_string('gradenoun'), get_string('lastmodifiedgrade', 'assign') in English)
# and reads the participant id after the prefix get_string('hiddenuser', 'assign').
# "Feedback comments" is the column of the comments feedback plugin (its get_editor_fields(): the
# string 'pluginname' of assignfeedback_comments), imported where that plugin is enabled.
MOODLE_HEADER = ("Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)", "Feedback comments")
MOODLE_PARTICIPANT = "Participant "
# Grades out of the LMS's points are rounded to this many decimals (Moodle shows two by default).
LMS_DECIMALS = 2


def _number(value: float) -> str:
    return f"{value:g}"


def _late(value: Any) -> str:
    return "" if value is None else ("yes" if value else "no")


def gradebook_rows(check_ids: Sequence[str], results: Iterable[dict[str, Any]], problems: Iterable[Problem],
                   graded_against: tuple[str, str]) -> list[dict[str, str]]:
    """Rows sorted by student. ``results`` are ``jaxgrade.result/1`` records (see grader.batch.run);
    ``graded_against``: the exercise's (version, fingerprint)."""
    version, fingerprint = graded_against
    rows = []
    for result in results:
        report = result["report"]
        scores = {c["id"]: c["score"] for c in report["checks"]}
        row = {"student": for_csv(result["student"]), "name": for_csv(result.get("name") or ""),
               "late": _late(result.get("late")), "score": _number(report["score"]),
               "max_score": _number(report["max_score"]), "status": report["status"],
               "source": for_csv(result["source"]), "sha256": report["submission"].get("sha256") or "",
               "version": for_csv(version), "fingerprint": fingerprint, "note": ""}
        row.update({cid: _number(scores[cid]) if cid in scores else "" for cid in check_ids})
        rows.append(row)
    notes: dict[str, list[Problem]] = {}
    for problem in problems:
        if problem.student is not None:
            notes.setdefault(problem.student, []).append(problem)
    graded = {r["student"]: r for r in rows}
    for student, found in notes.items():
        if for_csv(student) in graded:  # graded: what another file claimed of this row is flagged on it
            flagged = "; ".join(f"{p.reason}: {p.source}: {p.message}" for p in found if p.reason == "review")
            row = graded[for_csv(student)]
            row["note"] = for_csv("; ".join(n for n in (row["note"], flagged) if n))
            continue
        name = next((p.name for p in found if p.name), "")
        rows.append({"student": for_csv(student), "name": for_csv(name), "late": "", "score": "", "max_score": "",
                     "status": "not_graded", "source": for_csv("; ".join(p.source for p in found)), "sha256": "",
                     "version": "", "fingerprint": "",
                     "note": for_csv("; ".join(f"{p.reason}: {p.message}" for p in found)),
                     **{cid: "" for cid in check_ids}})
    return sorted(rows, key=lambda r: r["student"])


def write_gradebook(path: Path, check_ids: Sequence[str], results: Iterable[dict[str, Any]],
                    problems: Iterable[Problem], graded_against: tuple[str, str], lms: bool = False) -> int:
    """Write the gradebook (atomically); returns the number of rows. ``graded_against``: the
    exercise's (version, fingerprint); ``lms``: add the ``name`` and ``late`` columns (the input
    was a Canvas or Moodle download)."""
    rows = gradebook_rows(check_ids, results, problems, graded_against)
    columns = [FIXED[0], *(LMS_COLUMNS if lms else ()), *FIXED[1:], *check_ids, *TRAILING]
    write_atomically(path, _csv_text(columns, rows))
    return len(rows)


def _csv_text(columns: Sequence[str], rows: Iterable[dict[str, str]], terminator: str = "\n") -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator=terminator, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _graded(result: dict[str, Any]) -> bool:
    """Whether the report is the student's grade: an ``error`` report (the grader's own
    environment failed) is not the student's zero, so the LMS gets no grade for it."""
    return result["report"]["status"] in ("passed", "failed")


def lms_score(report: dict[str, Any], points: float | None) -> str:
    """The score as the LMS file gives it: out of ``points`` (rounded to LMS_DECIMALS), or as
    graded when ``points`` is None."""
    if points is None:
        return _number(report["score"])
    scaled = report["score"] * points / report["max_score"] if report["max_score"] else 0.0
    return _number(round(scaled, LMS_DECIMALS))


def feedback_comment(result: dict[str, Any], withheld: Collection[str] = ()) -> str:
    """One line for the student's LMS feedback: the checks a student may see (``withheld``: the
    ids of those a student may not see yet, grader.report.visibility; counted, never named or
    judged) and the name of the instructor's report, which the instructor can open or hand on."""
    report = result["report"]
    shown = [c for c in report["checks"] if c["id"] not in withheld]
    failed = [c["title"] for c in shown if c["status"] != "passed"]
    words = [f"jaxgrade: {sum(c['status'] == 'passed' for c in shown)} of {len(shown)} checks passed"]
    if failed:
        words.append("not passed: " + ", ".join(failed))
    if len(shown) < len(report["checks"]):
        hidden = len(report["checks"]) - len(shown)
        words.append(f"{hidden} hidden check{'s' if hidden != 1 else ''} counted in the grade")
    words.append(f"report: students/{result['student']}/report.html")
    return "; ".join(words)


def _people(results: Iterable[dict[str, Any]], problems: Iterable[Problem], points: float | None,
            withheld: Collection[str] = ()) -> list[dict[str, Any]]:
    """One entry per student (graded, or named by a not-graded problem), sorted by key."""
    people = {r["student"]: {"student": r["student"], "name": r.get("name"),
                             "score": lms_score(r["report"], points) if _graded(r) else "",
                             "comment": feedback_comment(r, withheld) if _graded(r) else "",
                             "graded_at": r.get("graded_at", "")} for r in results}
    for problem in problems:
        if problem.student is not None and problem.student not in people:
            people[problem.student] = {"student": problem.student, "name": problem.name, "score": "", "comment": "",
                                       "graded_at": ""}
    return [people[key] for key in sorted(people)]


def _canvas_name(name: str) -> str:
    """The Student cell: a name containing "Points Possible" would make its row the points row."""
    return for_csv(name.replace(CANVAS_POINTS_ROW, "Points-Possible"))


def canvas_rows(column: str, max_score: float, results: Iterable[dict[str, Any]], problems: Iterable[Problem],
                layout: str, points: float | None = None) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the Canvas import file. ``column``: the assignment column's header
    ("Title (assignment id)" matches an existing assignment by id, a bare title by title; an
    unknown title makes Canvas create the assignment). ``points``: the Canvas assignment's
    points, which scores are scaled to (None: ``max_score``, scores as graded). Students are
    matched by Canvas user id in a Canvas download, else by the student key as SIS Login ID. A
    student without a score gets an empty cell, which Canvas leaves unchanged."""
    header = [*CANVAS_HEADER, for_csv(column)]
    rows = [[CANVAS_POINTS_ROW, "", "", "", "", _number(max_score if points is None else points)]]
    for person in _people(results, problems, points):
        key = person["student"]
        by_id = layout == "canvas" and key.isdigit()
        rows.append([_canvas_name(person["name"] or key), key if by_id else "", "",
                     "" if layout == "canvas" else for_csv(key), "", person["score"]])
    return header, rows


def moodle_rows(max_score: float, results: Iterable[dict[str, Any]], problems: Iterable[Problem],
                layout: str, points: float | None = None,
                withheld: Collection[str] = ()) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the Moodle grading worksheet: only students of a Moodle download (the
    participant id in its folder names is what the worksheet identifies them by). ``points``:
    the Moodle assignment's maximum grade, which scores are scaled to (None: ``max_score``). An
    empty grade is skipped by Moodle; "Last modified (grade)" is when jaxgrade graded, so a
    grade changed in Moodle after that is kept unless the upload says to overwrite. "Feedback
    comments" is :func:`feedback_comment` (``withheld``: the checks students may not see yet), HTML-escaped (Moodle keeps
    comments as HTML)."""
    rows = []
    if layout == "moodle":
        for person in _people(results, problems, points, withheld):
            if re.fullmatch(r"\d+", person["student"]):
                rows.append([MOODLE_PARTICIPANT + person["student"], for_csv(person["name"] or ""), person["score"],
                             _number(max_score if points is None else points),
                             person["graded_at"] if person["score"] else "",
                             for_csv(html.escape(person["comment"], quote=False))])
    return list(MOODLE_HEADER), rows


def write_lms_gradebook(path: Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """An LMS import file: RFC 4180 CSV (CRLF line ends), UTF-8, replaced atomically."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    write_atomically(path, buffer.getvalue())


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (write a sibling, rename over it): a reader,
    an interrupt or a killed grader sees the old file or the new one, never half of one. The
    sibling is created readable and writable by its owner only (whatever the umask), so the
    file never exists with wider permissions, not even for a moment. No fsync (five per
    student cost more than grading on a slow disk): after a power cut a file may read back
    empty, which the next run treats as not graded and grades again."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.unlink(missing_ok=True)  # a leftover of a killed run (same pid): O_EXCL below makes it ours
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with open(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
