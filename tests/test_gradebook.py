"""grader.batch.gradebook: one row per student, one column per check, not-graded rows that say why,
cells a spreadsheet will not execute, and a file replaced in one step."""
from __future__ import annotations

import csv
import io

from grader.batch.gradebook import gradebook_rows, write_gradebook
from grader.batch.intake import Problem

CHECKS = ["load.function", "value.random_vectors", "limits.resources"]


def record(student: str, scores: dict[str, float], status: str, source: str | None = None) -> dict:
    checks = [{"id": cid, "score": score, "max_score": 1.0 if cid != "value.random_vectors" else 2.0,
               "status": "passed" if score else "failed", "message": ""} for cid, score in scores.items()]
    return {"student": student, "source": source or f"{student}.py",
            "report": {"score": sum(scores.values()), "max_score": 4.0, "status": status, "checks": checks,
                       "submission": {"sha256": "ab" * 32}}}


RESULTS = [record("bob", {"load.function": 1, "value.random_vectors": 0, "limits.resources": 1}, "failed"),
           record("alice", {"load.function": 1, "value.random_vectors": 2, "limits.resources": 1}, "passed")]
PROBLEMS = [Problem("carol.py", "carol", "empty", "the file is empty"),
            Problem("notes.txt", None, "not_python", "not a Python file: ignored")]


def read(path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_columns_rows_and_scores(tmp_path):
    path = tmp_path / "gradebook.csv"
    assert write_gradebook(path, CHECKS, RESULTS, PROBLEMS) == 3
    header = path.read_text().splitlines()[0].split(",")
    assert header == ["student", "score", "max_score", "status", *CHECKS, "source", "sha256", "note"]
    rows = read(path)
    assert [r["student"] for r in rows] == ["alice", "bob", "carol"]
    alice, bob, carol = rows
    assert (alice["score"], alice["max_score"], alice["status"], alice["value.random_vectors"]) == ("4", "4", "passed", "2")
    assert (bob["score"], bob["value.random_vectors"], bob["limits.resources"]) == ("2", "0", "1")
    assert bob["sha256"] == "ab" * 32 and bob["source"] == "bob.py"


def test_an_entry_that_was_not_graded_has_no_score_and_a_note(tmp_path):
    rows = gradebook_rows(CHECKS, RESULTS, PROBLEMS)
    carol = next(r for r in rows if r["student"] == "carol")
    assert carol["status"] == "not_graded" and carol["score"] == "" and carol["load.function"] == ""
    assert carol["note"] == "empty: the file is empty" and carol["source"] == "carol.py"
    assert all(r["student"] for r in rows)  # an entry without a student (notes.txt) has no row


def test_a_problem_for_a_student_who_was_graded_adds_no_second_row():
    rows = gradebook_rows(CHECKS, RESULTS, [Problem("bob/extra.txt", "bob", "not_python", "ignored")])
    assert [r["student"] for r in rows] == ["alice", "bob"]


def test_names_a_spreadsheet_would_run_are_quoted(tmp_path):
    path = tmp_path / "gradebook.csv"
    evil = record("=HYPERLINK(\"http://x\")", {"load.function": 1}, "failed", source="+cmd.py")
    write_gradebook(path, CHECKS, [evil], [Problem("@sum.py", "-2+3", "empty", "the file is empty")])
    cells = [cell for row in read(path) for cell in (row["student"], row["source"])]
    assert cells and all(not cell.startswith(("=", "+", "-", "@")) for cell in cells)
    assert "'=HYPERLINK" in path.read_text()


def test_the_file_is_replaced_whole(tmp_path):
    path = tmp_path / "gradebook.csv"
    write_gradebook(path, CHECKS, RESULTS, PROBLEMS)
    write_gradebook(path, CHECKS, RESULTS[:1], [])
    assert [r["student"] for r in read(path)] == ["bob"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gradebook.csv"]  # no temporary left behind
