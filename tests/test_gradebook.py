"""grader.batch.gradebook: one row per student, one column per check, not-graded rows that say why,
cells a spreadsheet will not execute, and a file replaced in one step."""
from __future__ import annotations

import csv
import datetime as dt
import io
import os
import re
import stat
from typing import Any

import pytest

from grader.batch.gradebook import (canvas_rows, feedback_comment, gradebook_rows, moodle_rows, write_atomically,
                                    write_gradebook, write_lms_gradebook)
from grader.batch.intake import Problem
from grader.batch.lms_assignment import read_lms_file
from grader.report.safe_text import for_csv
from grader.errors import UsageError

CHECKS = ["load.function", "value.random_vectors", "limits.resources"]


def record(student: str, scores: dict[str, float], status: str, source: str | None = None) -> dict:
    checks = [{"id": cid, "title": cid, "score": score, "max_score": 1.0 if cid != "value.random_vectors" else 2.0,
               "status": "passed" if score else "failed", "message": ""} for cid, score in scores.items()]
    return {"student": student, "source": source or f"{student}.py",
            "report": {"score": sum(scores.values()), "max_score": 4.0, "status": status, "checks": checks,
                       "submission": {"sha256": "ab" * 32}}}


RESULTS = [record("bob", {"load.function": 1, "value.random_vectors": 0, "limits.resources": 1}, "failed"),
           record("alice", {"load.function": 1, "value.random_vectors": 2, "limits.resources": 1}, "passed")]
AGAINST = ("2-course.1", "0f1e2d3c4b5a")  # exercise.toml's version, the fingerprint of the exercise's files
PROBLEMS = [Problem("carol.py", "carol", "empty", "the file is empty"),
            Problem("notes.txt", None, "not_python", "not a Python file: ignored")]


def read(path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_columns_rows_and_scores(tmp_path):
    path = tmp_path / "gradebook.csv"
    assert write_gradebook(path, CHECKS, RESULTS, PROBLEMS, AGAINST) == 3
    header = path.read_text().splitlines()[0].split(",")
    assert header == ["student", "score", "max_score", "status", *CHECKS, "source", "sha256", "version", "fingerprint", "note"]
    rows = read(path)
    assert [r["student"] for r in rows] == ["alice", "bob", "carol"]
    alice, bob, carol = rows
    assert (alice["score"], alice["max_score"], alice["status"], alice["value.random_vectors"]) == ("4", "4", "passed", "2")
    assert (bob["score"], bob["value.random_vectors"], bob["limits.resources"]) == ("2", "0", "1")
    assert bob["sha256"] == "ab" * 32 and bob["source"] == "bob.py"
    assert (bob["version"], bob["fingerprint"]) == AGAINST and (carol["version"], carol["fingerprint"]) == ("", "")


def test_an_entry_that_was_not_graded_has_no_score_and_a_note(tmp_path):
    rows = gradebook_rows(CHECKS, RESULTS, PROBLEMS, AGAINST)
    carol = next(r for r in rows if r["student"] == "carol")
    assert carol["status"] == "not_graded" and carol["score"] == "" and carol["load.function"] == ""
    assert carol["note"] == "empty: the file is empty" and carol["source"] == "carol.py"
    assert all(r["student"] for r in rows)  # an entry without a student (notes.txt) has no row


def test_a_problem_for_a_student_who_was_graded_adds_no_second_row():
    rows = gradebook_rows(CHECKS, RESULTS, [Problem("bob/extra.txt", "bob", "not_python", "ignored")], AGAINST)
    assert [r["student"] for r in rows] == ["alice", "bob"]


def test_names_a_spreadsheet_would_run_are_quoted(tmp_path):
    path = tmp_path / "gradebook.csv"
    evil = record("=HYPERLINK(\"http://x\")", {"load.function": 1}, "failed", source="+cmd.py")
    write_gradebook(path, CHECKS, [evil], [Problem("@sum.py", "-2+3", "empty", "the file is empty")], AGAINST)
    cells = [cell for row in read(path) for cell in (row["student"], row["source"])]
    assert cells and all(not cell.startswith(("=", "+", "-", "@")) for cell in cells)
    assert "'=HYPERLINK" in path.read_text()


def test_the_file_is_replaced_whole(tmp_path):
    path = tmp_path / "gradebook.csv"
    write_gradebook(path, CHECKS, RESULTS, PROBLEMS, AGAINST)
    write_gradebook(path, CHECKS, RESULTS[:1], [], AGAINST)
    assert [r["student"] for r in read(path)] == ["bob"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gradebook.csv"]  # no temporary left behind


# --- text from students, in CSV (#13.9) -------------------------------------------------------------------


@pytest.mark.parametrize("text, cell", [
    ("=1+1", "'=1+1"), ("+cmd", "'+cmd"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tTAB", "'\\tTAB"), ("\r=1", "'\\r=1"), ("\uff1dcmd", "'\uff1dcmd"),
    (" =1+1", "' =1+1"), ("  @SUM(A1)", "'  @SUM(A1)"), ("\u00a0=cmd", "'\\xa0=cmd"), ("\u3000+1", "'\\u3000+1"),
    (" alice", " alice"),
    ("evil\nname", "evil\\nname"), ("\x1b[2J\x1b[31mred", "\\x1b[2J\\x1b[31mred"), ("a\u202etxt.py", "a\\u202etxt.py"),
    ("alice", "alice"), ("caf\u00e9", "caf\u00e9"), ("caf\udce9", "caf\\xe9"),
])
def test_for_csv_escapes_controls_and_quotes_formulas(text, cell):
    assert for_csv(text) == cell


def spreadsheet_reads_a_formula(cell: str) -> bool:
    """What LibreOffice and Excel do with a CSV cell: leading whitespace trimmed, then a
    formula if it starts with one of OWASP's characters (a leading ' makes it text)."""
    return cell.lstrip().startswith(("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20"))


def test_no_cell_of_any_gradebook_is_a_formula_after_trimming(tmp_path):
    names = [" =HYPERLINK(\"http://x\")", "\t=1", "\u00a0+cmd", "  -2+3", "\u2003@SUM(A1)"]
    results = [{**record(str(1000 + i), {"load.function": 1}, "failed", source=f"{n}.py"), "name": n,
                "graded_at": "2026-11-29T19:16:00Z"} for i, n in enumerate(names)]
    write_gradebook(tmp_path / "gradebook.csv", CHECKS, results, [], AGAINST, lms=True)
    canvas = canvas_rows(" =Lab (1)", 4, results, [], "canvas")
    moodle = moodle_rows(4, results, [], "moodle")
    cells = [cell for row in csv.reader(io.StringIO((tmp_path / "gradebook.csv").read_text())) for cell in row]
    cells += [cell for header, rows in (canvas, moodle) for row in (header, *rows) for cell in row]
    assert len(cells) > 5 * len(names) and not [cell for cell in cells if spreadsheet_reads_a_formula(cell)]


def test_hostile_names_reach_the_gradebook_as_one_inert_cell_each(tmp_path):
    path = tmp_path / "gradebook.csv"
    names = ["evil\nname", "\x1b[31mred", "=HYPERLINK(\"http://x\")", "line\rbreak"]
    write_gradebook(path, CHECKS, [record(n, {"load.function": 1}, "failed", source=n + ".py") for n in names], [],
                    AGAINST)
    text = path.read_text()
    assert "\x1b" not in text and "\r" not in text and text.count("\n") == 1 + len(names)  # one line per row
    rows = read(path)
    assert sorted(r["student"] for r in rows) == sorted(for_csv(n) for n in names)
    assert all(not cell.startswith(("=", "+", "-", "@")) for r in rows for cell in (r["student"], r["source"]))


def test_lms_downloads_add_the_name_and_late_columns(tmp_path):
    path = tmp_path / "gradebook.csv"
    graded = {**record("12345", {"load.function": 1}, "failed"), "name": "doejane", "late": True}
    problem = Problem("smithann_444_text.html", "444", "no_python", "no .py file", name="smithann")
    write_gradebook(path, CHECKS, [graded], [problem], AGAINST, lms=True)
    assert path.read_text().splitlines()[0].split(",")[:4] == ["student", "name", "late", "score"]
    rows = {r["student"]: r for r in read(path)}
    assert (rows["12345"]["name"], rows["12345"]["late"]) == ("doejane", "yes")
    assert (rows["444"]["name"], rows["444"]["status"]) == ("smithann", "not_graded")
    write_gradebook(path, CHECKS, [graded], [problem], AGAINST)  # a plain folder: the columns of before
    assert "name" not in path.read_text().splitlines()[0].split(",")


def test_every_gradebook_file_is_created_private_whatever_the_umask(tmp_path):
    previous = os.umask(0)
    try:
        write_gradebook(tmp_path / "gradebook.csv", CHECKS, RESULTS, PROBLEMS, AGAINST)
        write_atomically(tmp_path / "other.txt", "x")
    finally:
        os.umask(previous)
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()} == {"gradebook.csv": 0o600,
                                                                                  "other.txt": 0o600}


# --- Canvas's gradebook import (#14.6) ----------------------------------------------------------------------
# The rules below are Canvas's own, from app/models/gradebook_importer.rb (instructure/canvas-lms): the header
# row has "Student" in its first cell and "ID" in its second; "SIS Login ID" alone, or "SIS User ID" then
# "SIS Login ID" (then optionally "Integration ID", "Root Account"), extend the student columns; the last
# student-information column must include "Section". Assignment columns are "Title (id)" (Assignment.
# title_and_id) or a bare title. A row whose first cell includes "Points Possible" sets the points; students
# are found by the ID column, then SIS User ID, then SIS Login ID, then by name; a blank grade is no change.


def canvas_student_columns(header: list[str]) -> int:
    """How many student-information columns Canvas's importer finds, or raise as it does ("Invalid header row")."""
    if not (len(header) > 3 and "Student" in header[0] and "ID" in header[1]):
        raise ValueError("Invalid header row")
    columns = 3
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        columns += 1
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        columns += 2 + (1 if re.search(r"Integration\s+ID", header[4]) else 0)
    if "Section" not in header[columns - 1]:
        raise ValueError("Invalid header row")
    return columns


def canvas_import(text: str) -> dict[str, Any]:
    """What Canvas would read from the file: the assignments, their points, and each student's grades."""
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    columns = canvas_student_columns(header)
    assignments = []
    for title in header[columns:]:
        match = re.fullmatch(r"(.*)\s+\((\d+)\)", title)  # Assignment.title_and_id
        assignments.append((match.group(1), match.group(2)) if match else (title, None))
    points = next(row for row in body if "Points Possible" in row[0])[columns:]
    students = [{"name": row[0], "id": row[1], "sis_user_id": row[2], "sis_login_id": row[3],
                 "grades": [grade.strip() for grade in row[columns:]]} for row in body if "Points Possible" not in row[0]]
    return {"assignments": assignments, "points": points, "students": students}


def test_the_canvas_file_passes_canvas_importer_rules(tmp_path):
    results = [{**record("12345", {"load.function": 1, "value.random_vectors": 2}, "failed"), "name": "doejane",
                "late": False},
               {**record("222", {"load.function": 1}, "error"), "name": "roebob", "late": True}]
    problems = [Problem("smithann_444_text.html", "444", "no_python", "no .py file", name="smithann")]
    header, rows = canvas_rows("Lab 3 (98765)", 10, results, problems, "canvas")
    path = tmp_path / "gradebook-canvas.csv"
    write_lms_gradebook(path, header, rows)
    data = path.read_bytes()
    assert data.count(b"\r\n") == 1 + len(rows) and data.decode("utf-8")  # RFC 4180 rows, UTF-8
    imported = canvas_import(data.decode())
    assert imported["assignments"] == [("Lab 3", "98765")] and imported["points"] == ["10"]
    assert [(s["id"], s["name"], s["grades"]) for s in imported["students"]] == [
        ("12345", "doejane", ["3"]),
        ("222", "roebob", [""]),      # the grader's environment failed: no grade, not a zero
        ("444", "smithann", [""])]    # not graded: no grade, not a zero


def test_the_canvas_file_of_a_plain_folder_matches_students_by_sis_login_id():
    header, rows = canvas_rows("NamedSharding (replicated)", 10, RESULTS, PROBLEMS, "files")
    imported = canvas_import(_csv([header, *rows]))
    assert imported["assignments"] == [("NamedSharding (replicated)", None)]  # matched by title
    assert [(s["id"], s["sis_login_id"], s["grades"]) for s in imported["students"]] == [
        ("", "alice", ["4"]), ("", "bob", ["2"]), ("", "carol", [""])]


def test_a_student_name_cannot_become_canvas_points_row_or_a_formula():
    evil = [record("=cmd|' /C calc'!A0", {"load.function": 1}, "failed"), record("Points Possible", {}, "failed")]
    header, rows = canvas_rows("Lab", 4, evil, [], "files")
    imported = canvas_import(_csv([header, *rows]))
    assert len(imported["students"]) == 2  # neither is read as the points row
    assert all(not s["name"].startswith(("=", "+", "-", "@")) for s in imported["students"])


# --- Moodle's grading worksheet upload (#14.6) -----------------------------------------------------------
# The rules are Moodle's, from mod/assign/feedback/offline/importgradeslib.php (assignfeedback_offline_grade_
# importer): the columns named exactly "Identifier", "Grade" and "Last modified (grade)" must all be present
# (else the upload is refused); each Identifier is "Participant " followed by the participant id the download
# used in its folder names; an empty grade is skipped; "Last modified (grade)" is read with PHP's strtotime.


def moodle_import(text: str) -> list[dict[str, Any]]:
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    if not all(column in header for column in ("Identifier", "Grade", "Last modified (grade)")):
        raise ValueError("invalid worksheet")
    identifier, grade, modified = (header.index(c) for c in ("Identifier", "Grade", "Last modified (grade)"))
    maximum = header.index("Maximum Grade")
    comments = header.index("Feedback comments")  # the comments plugin's column (get_editor_fields)
    imported = []
    for row in rows[1:]:
        assert row[identifier].startswith("Participant ")
        participant = row[identifier][len("Participant "):]
        when = dt.datetime.strptime(row[modified], "%Y-%m-%dT%H:%M:%SZ") if row[modified] else None
        if row[grade]:  # Moodle skips a grade above the maximum, without a word
            assert float(row[grade]) <= float(row[maximum]), row
        imported.append({"participant": participant, "grade": row[grade], "maximum": row[maximum], "modified": when,
                         "comments": row[comments]})
    return imported


def test_the_moodle_worksheet_passes_moodles_importer_rules():
    results = [{**record("1234567", {"load.function": 1, "value.random_vectors": 2}, "failed"), "name": "Jane Doe",
                "graded_at": "2026-11-29T19:16:00Z"},
               {**record("5555", {}, "error"), "name": "Al Li", "graded_at": "2026-11-29T19:17:00Z"}]
    problems = [Problem("Bob Roe_7654321_assignsubmission_onlinetext_", "7654321", "no_python", "text only",
                        name="Bob Roe")]
    header, rows = moodle_rows(10, results, problems, "moodle")
    imported = moodle_import(_csv([header, *rows]))
    assert [(r["participant"], r["grade"]) for r in imported] == [("1234567", "3"), ("5555", ""), ("7654321", "")]
    assert imported[0]["modified"] == dt.datetime(2026, 11, 29, 19, 16)
    assert [row[1] for row in rows] == ["Jane Doe", "Al Li", "Bob Roe"]


def test_the_lms_files_give_the_score_out_of_the_lms_points():
    results = [{**record("1234567", {"load.function": 1, "value.random_vectors": 2}, "failed"), "name": "Jane Doe",
                "graded_at": "2026-11-29T19:16:00Z"},
               {**record("7654321", {"load.function": 1, "value.random_vectors": 2, "limits.resources": 1}, "passed"),
                "name": "Bob Roe", "graded_at": "2026-11-29T19:17:00Z"},
               {**record("5555", {"load.function": 1}, "failed"), "graded_at": "2026-11-29T19:18:00Z"}]
    moodle = moodle_import(_csv(list(_rows(moodle_rows(4, results, [], "moodle", points=100)))))
    assert [(r["participant"], r["grade"], r["maximum"]) for r in moodle] == [
        ("1234567", "75", "100"), ("5555", "25", "100"), ("7654321", "100", "100")]
    canvas = canvas_import(_csv(list(_rows(canvas_rows("Lab 3 (98765)", 4, results, [], "canvas", points=3)))))
    assert canvas["points"] == ["3"]
    assert [(s["id"], s["grades"]) for s in canvas["students"]] == [("1234567", ["2.25"]), ("5555", ["0.75"]),
                                                                    ("7654321", ["3"])]
    # Without points, the scores and the maximum are the exercise's, as before.
    assert [r["grade"] for r in moodle_import(_csv(list(_rows(moodle_rows(4, results, [], "moodle"))))) ] == [
        "3", "1", "4"]
    # Scaled scores are rounded to two decimals: 1 of 3 points out of 10.
    third = record("1", {"load.function": 1}, "failed")
    third["report"]["max_score"] = 3.0
    assert canvas_rows("Lab", 3, [third], [], "canvas", points=10)[1][1][-1] == "3.33"


def test_the_moodle_feedback_comment_names_the_report_and_never_a_withheld_check():
    result = {**record("1234567", {"load.function": 1, "value.random_vectors": 0, "limits.resources": 1}, "failed"),
              "name": "Jane Doe", "graded_at": "2026-11-29T19:16:00Z"}
    for check, title in zip(result["report"]["checks"], ["Loads", "Values <on> random & vectors", "Secret limits"]):
        check["title"] = title
    shown = feedback_comment(result)
    assert shown == ("jaxgrade: 2 of 3 checks passed; not passed: Values <on> random & vectors; "
                     "report: students/1234567/report.html")
    result["report"]["checks"][2]["status"] = "failed"
    hiding = feedback_comment(result, withheld={"limits.resources"})
    assert "Secret" not in hiding and "2 of 3" not in hiding
    assert hiding == ("jaxgrade: 1 of 2 checks passed; not passed: Values <on> random & vectors; "
                      "1 hidden check counted in the grade; report: students/1234567/report.html")
    imported = moodle_import(_csv(list(_rows(moodle_rows(4, [result], [], "moodle", withheld={"limits.resources"})))))
    # Moodle keeps feedback comments as HTML: the text is escaped so it shows as written.
    assert imported[0]["comments"] == hiding.replace("<", "&lt;").replace(">", "&gt;").replace("& ", "&amp; ")
    not_graded = moodle_rows(4, [], [Problem("x", "7654321", "no_python", "text only", name="Bob")], "moodle")
    assert not_graded[1][0][MOODLE_COMMENTS] == ""  # not graded: no comment, as no grade


# --- the LMS's own files: the assignment's points and Canvas's column with its id ---------------------------
# Canvas's "Export Entire Gradebook" (GradebookExporter: the student columns, one "Title (id)" column per
# assignment, then totals; a "Points Possible" row, its first cell indented with spaces) and the Moodle
# assignment's "Download grading worksheet" (a "Maximum Grade" column).

CANVAS_EXPORT = ('Student,ID,SIS User ID,SIS Login ID,Section,Lab 2 (98700),Lab 3 (98765),Current Points,Final Score\n'
                 '    Points Possible,,,,,20.00,25.00,(read only),(read only)\n'
                 '"Doe, Jane",12345,,jdoe,Section A,18.00,,18.00,90.00\n')
MOODLE_WORKSHEET = ('Identifier,"Full name","Email address",Status,Grade,"Maximum Grade","Grade can be changed",'
                    '"Last modified (submission)","Last modified (grade)","Feedback comments"\n'
                    '"Participant 1234567","Jane Doe",jane@example.org,"Submitted for grading",,100.00,Yes,'
                    '"Sunday, 29 November 2026, 7:16 PM",-,\n'
                    '"Participant 7654321","Bob Roe",bob@example.org,"No submission",,100.00,Yes,-,-,\n')


def test_canvas_export_gives_the_column_with_its_id_and_the_points(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text("\ufeff" + CANVAS_EXPORT)  # Canvas writes a byte-order mark
    for wanted in ("Lab 3", "98765", "Lab 3 (98765)"):
        found = read_lms_file(path, wanted, "NamedSharding")
        assert (found.column, found.points) == ("Lab 3 (98765)", 25.0)
    assert read_lms_file(path, None, "Lab 2").column == "Lab 2 (98700)"  # by the exercise's title
    with pytest.raises(UsageError, match=r"no assignment column match 'Lab 9'.*'Lab 2 \(98700\)', 'Lab 3 \(98765\)'"):
        read_lms_file(path, "Lab 9", "NamedSharding")
    path.write_text(CANVAS_EXPORT.replace("25.00", "(read only)"))
    with pytest.raises(UsageError, match="not a number of points"):
        read_lms_file(path, "Lab 3", "NamedSharding")


def test_moodle_worksheet_gives_the_maximum_grade(tmp_path):
    path = tmp_path / "worksheet.csv"
    path.write_text(MOODLE_WORKSHEET)
    found = read_lms_file(path, None, "NamedSharding")
    assert (found.points, found.column) == (100.0, None)
    path.write_text(MOODLE_WORKSHEET.replace("100.00,Yes,-", "50.00,Yes,-"))
    with pytest.raises(UsageError, match="one Maximum Grade on every row"):
        read_lms_file(path, None, "NamedSharding")


@pytest.mark.parametrize("text", ["", "a,b\n1,2\n", "\xff\xfe"])
def test_a_file_that_is_neither_lms_file_is_refused_with_what_to_give(tmp_path, text):
    path = tmp_path / "other.csv"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(UsageError, match="--lms-file"):
        read_lms_file(path, None, "NamedSharding")


def _rows(header_and_rows):
    header, rows = header_and_rows
    yield header
    yield from rows


MOODLE_COMMENTS = 5


def test_no_moodle_worksheet_rows_without_participant_ids():
    assert moodle_rows(10, RESULTS, PROBLEMS, "files")[1] == []


def _csv(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue()
