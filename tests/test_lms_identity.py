"""LMS identities come only from what the LMS wrote (#41.5), through ``jaxgrade grade`` on real
downloads in temporary folders: a file name of the student's choosing that imitates another
participant stays its owner's; two files claiming one participant, or an id the roster
(``--lms-file``) does not list, are flagged for review in the gradebook, no row overwritten and
none silently missing; with the roster, a name Canvas's naming alone cannot place is placed."""
from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE
from grader.batch.intake import find_submissions

RIGHT, WRONG = SEED_EXERCISE / "reference.py", SEED_EXERCISE / "wrong" / "value_mean.py"
MOODLE_WORKSHEET = ('Identifier,"Full name","Email address",Status,Grade,"Maximum Grade","Grade can be changed",'
                    '"Last modified (submission)","Last modified (grade)","Feedback comments"\n'
                    '"Participant 1002","Alice Doe",alice@example.org,"Submitted for grading",,100.00,Yes,-,-,\n'
                    '"Participant 2001","Mallory_Smith",mallory@example.org,"Submitted for grading",,100.00,Yes,-,-,\n')
CANVAS_EXPORT = ('Student,ID,SIS User ID,SIS Login ID,Section,Lab 3 (98765)\n'
                 '    Points Possible,,,,,10.00\n'
                 '"Doe, Jane",1002,,jdoe,A,\n"Smith, Mallory",2001,,msmith,A,\n"Roe, Bob",3004,,broe,A,\n')


def _grade(download: Path, out: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "grade", str(download), "-e", SEED_EXERCISE.name,
                           "-o", str(out), "-j", "1", *flags], capture_output=True, text=True, timeout=600,
                          cwd=REPO, env={**os.environ, "NO_COLOR": "1"})


def _book(path: Path) -> dict[str, dict[str, str]]:
    return {row["student"]: row for row in csv.DictReader(io.StringIO(path.read_text()))}


def _moodle_download(folder: Path) -> Path:
    folder.mkdir()
    files = {"Alice Doe_1002_assignsubmission_file_solution.py": RIGHT,
             # Mallory's own file, named by her to look like Alice's: Moodle's prefix comes first
             "Mallory Smith_2001_assignsubmission_file_Alice Doe_1002_assignsubmission_file_x.py": WRONG,
             # a doctored entry: a second name claiming participant 1002
             "Mallory Smith_1002_assignsubmission_file_main.py": WRONG,
             "Eve Unknown_3003_assignsubmission_file_sol.py": RIGHT}
    for name, source in files.items():
        shutil.copyfile(source, folder / name)
    return folder


@pytest.mark.slow
def test_moodle_claims_are_read_from_the_left_and_checked_against_the_worksheet(tmp_path):
    download = _moodle_download(tmp_path / "download")
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(MOODLE_WORKSHEET)
    out = tmp_path / "out"
    done = _grade(download, out, "--gradebook", "moodle", "--lms-file", str(worksheet))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    book = _book(out / "gradebook.csv")
    assert set(book) == {"1002", "2001", "3003"}, book
    alice, mallory, eve = book["1002"], book["2001"], book["3003"]
    assert (alice["name"], alice["status"], alice["score"]) == ("Alice Doe", "passed", "10")  # her own file
    assert "review" in alice["note"] and "Mallory Smith_1002_assignsubmission_file_main.py" in alice["note"]
    assert (mallory["name"], mallory["status"]) == ("Mallory Smith", "failed")  # graded from her own file
    assert "Alice Doe_1002_assignsubmission_file_x.py" in mallory["source"]
    assert eve["status"] == "not_graded" and "not in the grading worksheet" in eve["note"]
    worksheet_rows = list(csv.DictReader(io.StringIO((out / "gradebook-moodle.csv").read_text())))
    assert {r["Identifier"]: r["Grade"] for r in worksheet_rows} == {
        "Participant 1002": "100", "Participant 2001": "70", "Participant 3003": ""}

    # Without the worksheet nothing tells which of the two names is participant 1002's: both flagged
    bare = _grade(download, tmp_path / "bare")
    assert bare.returncode == 0, bare.stderr[-3000:]
    book = _book(tmp_path / "bare" / "gradebook.csv")
    assert book["1002"]["status"] == "not_graded" and "'Alice Doe' and 'Mallory Smith' both claim participant 1002" \
        in book["1002"]["note"], book["1002"]
    assert book["2001"]["status"] == "failed" and book["3003"]["status"] == "passed"


def _canvas_download(folder: Path) -> Path:
    folder.mkdir()
    files = {  # Mallory's only upload, its display name imitating Jane's late file (Jane uploaded nothing)
             "smithmallory_2001_502_doejane_LATE_1002_503_solution.py": WRONG,
             "roebob_LATE_3004_505_main.py": RIGHT,
             "unknowneve_3003_506_sol.py": RIGHT}
    for name, source in files.items():
        shutil.copyfile(source, folder / name)
    return folder


def test_canvas_names_alone_cannot_tell_whose_but_the_roster_can(tmp_path):
    intake = find_submissions(_canvas_download(tmp_path / "download"), "replicated_sharding_value")
    assert intake.layout == "canvas"
    assert [(p.reason, p.student) for p in intake.problems] == [("ambiguous", None)]  # 2001's, or 1002's late?


@pytest.mark.slow
def test_canvas_ids_and_late_marks_come_from_the_roster_checked_names(tmp_path):
    download = _canvas_download(tmp_path / "download")
    export = tmp_path / "export.csv"
    export.write_text("\ufeff" + CANVAS_EXPORT)
    out = tmp_path / "out"
    done = _grade(download, out, "--gradebook", "canvas", "--lms-file", str(export), "--assignment", "Lab 3")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    book = _book(out / "gradebook.csv")
    assert set(book) == {"2001", "3003", "3004"}, book  # no row for Jane: she uploaded nothing
    assert (book["2001"]["name"], book["2001"]["late"], book["2001"]["status"]) == ("smithmallory", "no", "failed")
    assert (book["3004"]["late"], book["3004"]["status"]) == ("yes", "passed")  # Canvas's own LATE mark
    assert book["3003"]["status"] == "not_graded" and "review" in book["3003"]["note"]
    assert "whom it does not list" in book["3003"]["note"]
