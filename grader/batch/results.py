"""A student's results on disk in a class run: the key a result is valid for, the student's folder,
the reports and ``result.json`` (written last: the marker that the result is complete), and
whether a stored one stands for this run. See :mod:`grader.batch.run`."""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from grader import __version__
from grader.authoring.exercise import Exercise
from grader.batch.gradebook import write_atomically
from grader.batch.submissions import Submission
from grader.report.result import Report

RESULT_SCHEMA = "jaxgrade.result/1"
REPORT_FORMATS = ("json", "html", "md")
AUDIENCE = "instructor"


def result_key(exercise: Exercise, sha256: str, seed: int) -> dict[str, Any]:
    """What a stored result is valid for: the same file, exercise version, grader and seed."""
    return {"sha256": sha256, "exercise": exercise.slug, "exercise_version": exercise.fingerprint,
            "jaxgrade": __version__, "seed": seed}


# 64 bits: a student cannot search out a name whose folder is a classmate's (32 bits they could).
_HASH_CHARS = 16
_HASHED = re.compile(rf"-[0-9a-f]{{{_HASH_CHARS}}}$")


def student_folder(student: str) -> str:
    """A folder name for a student id that is safe on every file system, the same in every run,
    and never another student's: an id that is plain (lower case, no character a file system
    mangles, short) is its own folder; every other id gets a short hash of itself, and so does
    a plain id that ends like such a hash ("jane_doe-ed37d99b8d5e3a1f"), so none can take a
    hashed name."""
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", student).strip(".") or "_"
    if plain == student and plain.lower() == plain and len(plain) <= 80 and not _HASHED.search(plain):
        return plain
    digest = hashlib.sha256(student.encode("utf-8", "surrogateescape")).hexdigest()[:_HASH_CHARS]
    return f"{plain[:80]}-{digest}"


def load_result(directory: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((directory / "result.json").read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("schema") == RESULT_SCHEMA else None


def environment_failed(report: dict[str, Any]) -> bool:
    """Whether the grader's environment (not the student) decided this report: it then says
    nothing about the submission, and must be graded again rather than reused."""
    return report.get("status") == "error" or any(c.get("status") == "error" for c in report.get("checks", ()))


def reusable(stored: dict[str, Any], key: dict[str, Any], student: str) -> bool:
    """A stored result stands for this run: same key, same student, and decided by the student's code."""
    return (stored.get("key") == key and stored.get("student") == student
            and isinstance(stored.get("report"), dict) and not environment_failed(stored["report"]))


def last_duration(stored: dict[str, Any] | None) -> float:
    """How long a stored grading took (its report's ``duration_s``); infinity where there is none
    or it is not a finite number, so a never-graded submission counts as a long one."""
    report = stored.get("report") if isinstance(stored, dict) else None
    seconds = report.get("duration_s") if isinstance(report, dict) else None
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 <= seconds < math.inf:
        return float(seconds)
    return math.inf


def expected_seconds(lasted: Mapping[str, float]) -> dict[str, float]:
    """Each student's expected grading time: their ``last_duration``, or where it is unknown
    the median of the known ones (1.0 each when none is known: all alike)."""
    known = [seconds for seconds in lasted.values() if seconds < math.inf]
    typical = statistics.median(known) if known else 1.0
    return {student: seconds if seconds < math.inf else typical for student, seconds in lasted.items()}


def private_folder(path: Path) -> Path:
    """``path`` as a folder only its owner may enter: created with mode 0700 (a folder of ours
    left wider by an older jaxgrade is narrowed)."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        status = path.lstat()
        if path.is_dir() and not path.is_symlink() and status.st_mode & 0o077 and status.st_uid == os.getuid():
            path.chmod(0o700)
    return path


def label(student: str, name: str | None) -> str:
    """How a student is named to the instructor: the LMS's name with its id, or the key alone."""
    return f"{name} ({student})" if name else student


@dataclass(frozen=True)
class Graded:
    """One student's graded result, rendered where it was graded (a grading process): the files of
    their folder as text, ``result.json`` last, and its record (what the gradebook and the
    summary read). Writing it is all that is left to the process that keeps the class's files."""
    files: tuple[tuple[str, str], ...]
    record: dict[str, Any]

    @property
    def report(self) -> dict[str, Any]:
        """The ``jaxgrade.report/1`` document."""
        return self.record["report"]


def preload_rendering() -> None:
    """Compile the report templates now, before the grading processes fork (they share them)."""
    from grader.report.render import preload
    preload(REPORT_FORMATS)


def render_student(submission: Submission, report: Report, key: dict[str, Any]) -> Graded:
    """The student's reports and ``result.json``, as text. A report the grader's environment
    decided is stored without a key: never reused."""
    from grader.report.render import render
    files = [(f"report.{format}", render(report, format, audience=AUDIENCE)) for format in REPORT_FORMATS]
    document = report.to_dict()
    record = {"schema": RESULT_SCHEMA, "student": submission.student, "name": submission.name,
              "late": submission.late, "source": submission.source,
              "key": None if environment_failed(document) else key,
              "graded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "report": document}
    files.append(("result.json", json.dumps(record, indent=1) + "\n"))
    return Graded(tuple(files), record)


def write_student(directory: Path, graded: Graded) -> None:
    """Write a student's rendered files, ``result.json`` (the marker that the result is complete) last."""
    private_folder(directory.parent)
    private_folder(directory)
    for name, text in graded.files:
        write_atomically(directory / name, text)
