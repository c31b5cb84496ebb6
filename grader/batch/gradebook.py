"""``gradebook.csv``: one row per student, the columns an LMS import and a spreadsheet want.

    student, score, max_score, status, <one column per check: points scored>, source, sha256, note

``status`` is the report's (``passed``, ``failed``, ``error``) or ``not_graded`` for an entry
the intake could not grade (the ``note`` says why; its score is empty, not 0, so a missing
file is not mistaken for a graded zero). The file is replaced atomically, so a reader or a
crash never sees half of it.
"""
from __future__ import annotations

import csv
import io
import os
import threading
from pathlib import Path
from typing import Any, Iterable, Sequence

from grader.batch.intake import Problem

FIXED = ("student", "score", "max_score", "status")
TRAILING = ("source", "sha256", "note")


def _number(value: float) -> str:
    return f"{value:g}"


def _text(value: str) -> str:
    """A cell a spreadsheet will not run: names come from students, who can start them with '='."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def gradebook_rows(check_ids: Sequence[str], results: Iterable[dict[str, Any]],
                   problems: Iterable[Problem]) -> list[dict[str, str]]:
    """Rows sorted by student. ``results`` are ``jaxgrade.result/1`` records (see grader.batch.run)."""
    rows = []
    for result in results:
        report = result["report"]
        scores = {c["id"]: c["score"] for c in report["checks"]}
        row = {"student": _text(result["student"]), "score": _number(report["score"]),
               "max_score": _number(report["max_score"]), "status": report["status"],
               "source": _text(result["source"]), "sha256": report["submission"].get("sha256") or "", "note": ""}
        row.update({cid: _number(scores[cid]) if cid in scores else "" for cid in check_ids})
        rows.append(row)
    notes: dict[str, list[Problem]] = {}
    for problem in problems:
        if problem.student is not None:
            notes.setdefault(problem.student, []).append(problem)
    graded = {r["student"] for r in rows}
    for student, found in notes.items():
        if student in graded:
            continue
        rows.append({"student": _text(student), "score": "", "max_score": "", "status": "not_graded",
                     "source": _text("; ".join(p.source for p in found)), "sha256": "",
                     "note": _text("; ".join(f"{p.reason}: {p.message}" for p in found)),
                     **{cid: "" for cid in check_ids}})
    return sorted(rows, key=lambda r: r["student"])


def write_gradebook(path: Path, check_ids: Sequence[str], results: Iterable[dict[str, Any]],
                    problems: Iterable[Problem]) -> int:
    """Write the gradebook (atomically); returns the number of rows."""
    rows = gradebook_rows(check_ids, results, problems)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=[*FIXED, *check_ids, *TRAILING], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomically(path, buffer.getvalue())
    return len(rows)


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (write a sibling, rename over it): a reader,
    an interrupt or a killed grader sees the old file or the new one, never half of one. No
    fsync (five per student cost more than grading on a slow disk): after a power cut a file
    may read back empty, which the next run treats as not graded and grades again."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(temporary, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    os.replace(temporary, path)
