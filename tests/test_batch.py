"""grader.batch.run / ``jaxgrade grade``: a class graded with the verdicts of ``check``, from a
folder or a zip; results kept across interrupted and crashed runs; only what changed regraded."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import SEED_EXERCISE
from grader.batch.progress import Progress
from grader.batch.run import grade_class, student_folder
from grader.engine import grade
from grader.errors import PoolError
from grader.sandbox.pool import ForkedProcess, Pool
from grader.authoring.exercise import load_exercise

HOSTILE = Path(__file__).resolve().parent / "hostile"

MIXED = {"alice": "reference.py", "bob": "wrong/value_mean.py", "carol": "wrong/limits_crash.py",
         "dave": "wrong/limits_infinite_loop.py", "erin": "right/make_mesh.py",
         "frank": "wrong/structure_sums_original.py", "gina": "wrong/load_syntax_error.py"}


@pytest.fixture(scope="module")
def exercises_root(tmp_path_factory) -> Path:
    """The seed exercise with a 1 s call limit, so the hanging submission costs 2 s, not 10."""
    root = tmp_path_factory.mktemp("exercises")
    copy = root / SEED_EXERCISE.name
    shutil.copytree(SEED_EXERCISE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    toml = copy / "exercise.toml"
    text = toml.read_text().replace("call_s = 5 ", "call_s = 1 ").replace("total_s = 60 ", "total_s = 30 ")
    assert "call_s = 1 " in text
    toml.write_text(text)
    return root


@pytest.fixture(scope="module")
def exercise(exercises_root):
    return load_exercise(exercises_root / SEED_EXERCISE.name)


def make_class(folder: Path, students: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for student, variant in students.items():
        shutil.copyfile(SEED_EXERCISE / variant, folder / f"{student}.py")
    return folder


def gradebook(out: Path) -> dict[str, dict[str, str]]:
    return {row["student"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


def verdicts(checks) -> list[tuple[str, str, float]]:
    return [(c["id"], c["status"], c["score"]) if isinstance(c, dict) else (c.id, c.status, c.score) for c in checks]


@pytest.mark.slow
def test_a_zipped_mixed_class_gets_the_verdicts_of_check_one_by_one(exercise, tmp_path):
    folder = make_class(tmp_path / "class", MIXED)
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for path in sorted(folder.iterdir()):
            handle.write(path, f"export/{path.name}")
        handle.writestr("export/readme.txt", "not a submission")
    out = tmp_path / "out"
    outcome = grade_class(exercise, archive, out, jobs=2)
    assert sorted(outcome.graded) == sorted(MIXED) and not outcome.failed and not outcome.reused
    book = gradebook(out)
    for student in MIXED:
        one = grade(exercise, folder / f"{student}.py")  # what `jaxgrade check` reports: exec'd child
        stored = json.loads((out / "students" / student_folder(student) / "result.json").read_text())
        assert verdicts(stored["report"]["checks"]) == verdicts(one.checks), student
        assert float(book[student]["score"]) == one.score and book[student]["status"] == one.status
        assert stored["source"] == f"class.zip:export/{student}.py"
        for name in ("report.json", "report.html", "report.md"):
            assert (out / "students" / student / name).stat().st_size > 0
    assert book["alice"]["status"] == "passed" and book["gina"]["score"] == "0"
    limits = {s: book[s]["limits.resources"] for s in ("carol", "dave", "alice")}
    assert limits == {"carol": "0", "dave": "0", "alice": "1"}
    summary = (out / "summary.md").read_text()
    assert "| carol | limit |" in summary and "| dave | limit |" in summary
    assert "| class.zip:export/readme.txt |" in summary and "<svg" in (out / "summary.html").read_text()


def _report_without_timing(report: dict) -> dict:
    kept = {k: v for k, v in report.items() if k not in ("duration_s", "submission", "environment")}
    kept["checks"] = [{k: v for k, v in c.items() if k != "duration_s"} for c in report["checks"]]
    return kept


@pytest.mark.slow
def test_a_report_depends_neither_on_the_classmates_nor_on_the_order(exercise, tmp_path):
    """Failing inputs found for one student are never tried first for another: the same file
    gets the same report, counterexamples included, in any class and alone (``check``)."""
    first = make_class(tmp_path / "first", {"bob": "wrong/value_skips_first.py", "alice": "reference.py",
                                            "ivan": "wrong/value_mean.py"})
    second = make_class(tmp_path / "second", {"zoe": "wrong/value_counts_every_copy.py",
                                              "bob": "wrong/value_skips_first.py"})
    reports = []
    for folder in (first, second):
        grade_class(exercise, folder, tmp_path / f"out-{folder.name}", jobs=2, seed=3)
        stored = json.loads((tmp_path / f"out-{folder.name}" / "students" / "bob" / "result.json").read_text())
        reports.append(_report_without_timing(stored["report"]))
    alone = grade(exercise, first / "bob.py", seed=3).to_dict()
    assert reports[0] == reports[1] == _report_without_timing(alone)
    assert any(c["counterexample"] for c in reports[0]["checks"] if c["status"] == "failed")


def _results(out: Path) -> dict[str, str]:
    return {p.parent.name: p.read_text() for p in (out / "students").glob("*/result.json")}


def _run_until(command: list[str], env: dict[str, str], out: Path, at_least: int, stop: signal.Signals) -> int:
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(_results(out)) < at_least and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(stop)
    process.communicate(timeout=60)
    return process.returncode


@pytest.mark.slow
def test_an_interrupted_or_killed_run_keeps_its_results_and_the_next_run_continues(exercise, exercises_root, tmp_path,
                                                                                   ctrl_c_reaches_children):
    students = {f"s{i:02d}": ("reference.py" if i % 2 else "wrong/value_mean.py") for i in range(10)}
    folder = make_class(tmp_path / "class", students)
    out = tmp_path / "out"
    command = [str(Path(sys.executable).parent / "jaxgrade"), "grade", str(folder), "-e", exercise.slug,
               "-o", str(out), "-j", "1"]
    env = {**os.environ, "JAXGRADE_EXERCISES": str(exercises_root)}

    # Ctrl-C: every finished result kept, the gradebook lists exactly those.
    assert _run_until(command, env, out, 2, signal.SIGINT) == 130
    after_interrupt = _results(out)
    assert 2 <= len(after_interrupt) < len(students)
    book = gradebook(out)
    assert set(book) == set(after_interrupt)
    assert all(book[s]["status"] in ("passed", "failed") and book[s]["score"] for s in book)

    # A crash (SIGKILL): what was finished stays; the gradebook is whole rows of finished results.
    _run_until(command, env, out, len(after_interrupt) + 2, signal.SIGKILL)
    after_kill = _results(out)
    assert len(after_kill) >= len(after_interrupt) + 2
    assert {s: after_kill[s] for s in after_interrupt} == after_interrupt  # not regraded
    assert set(gradebook(out)) <= set(after_kill)

    # The rerun grades only what is missing, and completes the gradebook.
    outcome = grade_class(exercise, folder, out, jobs=2)
    assert set(outcome.reused) == set(after_kill)
    assert set(outcome.graded) == set(students) - set(after_kill)
    final = _results(out)
    assert {s: final[s] for s in after_kill} == after_kill
    book = gradebook(out)
    assert set(book) == set(students)
    assert {book[s]["status"] for s in students if students[s] == "reference.py"} == {"passed"}
    assert {book[s]["status"] for s in students if students[s] != "reference.py"} == {"failed"}


@pytest.mark.slow
def test_only_what_changed_is_regraded(exercise, exercises_root, tmp_path):
    folder = make_class(tmp_path / "class", {"alice": "reference.py", "bob": "wrong/value_mean.py",
                                             "carol": "wrong/load_wrong_name.py"})
    out = tmp_path / "out"
    first = grade_class(exercise, folder, out, jobs=2)
    assert sorted(first.graded) == ["alice", "bob", "carol"]
    assert first.throughput is not None and (first.throughput.graded, first.throughput.workers) == (3, 2)
    assert 0 <= first.throughput.own_cpu_s <= first.throughput.cpu_s  # type: ignore[operator]
    assert re.search(r"^3 submissions graded in [0-9.]+ s by 2 workers: [0-9]+ a minute, [0-9.]+ s of CPU each "
                     r"\([0-9]+% of it in the grader's own process\)\.$", (out / "summary.md").read_text(), re.M)

    unchanged = grade_class(exercise, folder, out, jobs=2)
    assert unchanged.graded == [] and sorted(unchanged.reused) == ["alice", "bob", "carol"]
    assert unchanged.throughput is None and "a minute" not in (out / "summary.md").read_text()

    shutil.copyfile(SEED_EXERCISE / "reference.py", folder / "bob.py")  # bob fixed his solution
    changed = grade_class(exercise, folder, out, jobs=2)
    assert changed.graded == ["bob"] and sorted(changed.reused) == ["alice", "carol"]
    assert gradebook(out)["bob"]["status"] == "passed"

    forced = grade_class(exercise, folder, out, jobs=2, regrade=True)
    assert sorted(forced.graded) == ["alice", "bob", "carol"] and forced.reused == []

    new_seed = grade_class(exercise, folder, out, jobs=2, seed=1)
    assert sorted(new_seed.graded) == ["alice", "bob", "carol"]

    edited = exercises_root / "edited" / SEED_EXERCISE.name
    shutil.copytree(exercise.directory, edited)
    (edited / "statement.md").write_text((edited / "statement.md").read_text() + "\nA clarification.\n")
    newer = load_exercise(edited)
    assert newer.fingerprint != exercise.fingerprint
    regraded = grade_class(newer, folder, out, jobs=2, seed=1)
    assert sorted(regraded.graded) == ["alice", "bob", "carol"]
    stored = json.loads((out / "students" / "alice" / "result.json").read_text())
    assert stored["key"]["exercise_version"] == newer.fingerprint


@pytest.mark.slow
def test_a_regrade_starts_with_what_took_longest_last_time(exercise, tmp_path):
    students = {name: "wrong/load_wrong_name.py" for name in ("alice", "bob", "carol", "dave", "erin")}
    folder = make_class(tmp_path / "class", students)
    out = tmp_path / "out"
    assert sorted(grade_class(exercise, folder, out, jobs=1).graded) == sorted(students)
    for student, seconds in {"alice": 0.5, "bob": 7.0, "carol": 2.0, "dave": "slow"}.items():
        path = out / "students" / student / "result.json"
        stored = json.loads(path.read_text())
        stored["report"]["duration_s"] = seconds
        path.write_text(json.dumps(stored))
    (out / "students" / "erin" / "result.json").unlink()
    # One at a time, so grading order is finishing order. Erin has no record and dave no usable
    # duration: either may be slow, so they go first, in the class's order.
    meter = Progress(len(students), io.StringIO(), interactive=False)
    again = grade_class(exercise, folder, out, jobs=1, regrade=True, progress=meter)
    assert again.graded == ["dave", "erin", "bob", "carol", "alice"]
    # The ETA's weights: the unknown ones count as the median of the known ones.
    assert meter.costs == {"alice": 0.5, "bob": 7.0, "carol": 2.0, "dave": 2.0, "erin": 2.0}
    assert {s: gradebook(out)[s]["score"] for s in students} == {s: "0" for s in students}


@pytest.mark.slow
def test_the_command_reports_what_it_did_and_where(exercises_root, tmp_path):
    folder = make_class(tmp_path / "class", {"alice": "wrong/load_wrong_name.py"})
    (folder / "notes.txt").write_text("not a submission")
    out = tmp_path / "out"
    env = {**os.environ, "JAXGRADE_EXERCISES": str(exercises_root)}
    command = [str(Path(sys.executable).parent / "jaxgrade"), "grade", str(folder), "-e", SEED_EXERCISE.name,
               "-o", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 graded, 0 unchanged" in done.stdout and "1 entry not graded" in done.stdout
    assert "not graded: notes.txt: not_python" in done.stdout
    assert f"Summary:   {out / 'summary.html'}" in done.stdout
    assert "[1/1] alice: 0/10 failed" in done.stderr  # not a terminal: plain progress lines
    (tmp_path / "nothing").mkdir()
    empty = subprocess.run([*command[:2], str(tmp_path / "nothing"), *command[3:]], env=env, capture_output=True,
                           text=True, timeout=300)
    assert empty.returncode == 2 and "found nothing to grade" in empty.stderr
    assert "alice" in (out / "gradebook.csv").read_text()  # the earlier results were left alone
    missing = subprocess.run([*command[:2], str(tmp_path / "nowhere"), *command[3:]], env=env, capture_output=True,
                             text=True, timeout=300)
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr


def test_a_submission_the_grader_failed_on_has_its_row_in_the_gradebook_saying_why(exercise, tmp_path):
    def broken_for_students(argv: list[str], *rest: object) -> ForkedProcess:
        """Forks the trusted reference's warm-up; a student's child (confined: its last argument
        is the policy) meets what a warm process that died under the grader raises."""
        if argv[-1].startswith("{"):
            raise PoolError("the warm grading process has exited")
        return pool.launch(argv, *rest)

    out = tmp_path / "out"
    with Pool() as pool:
        outcome = grade_class(exercise, make_class(tmp_path / "class", {"alice": "reference.py", "bob": "reference.py"}),
                              out, jobs=1, launcher=broken_for_students)
    assert sorted(outcome.failed) == ["alice", "bob"] and not outcome.graded
    book = gradebook(out)
    assert sorted(book) == ["alice", "bob"]  # no student silently missing from what the instructor reads
    for row in book.values():
        assert row["status"] == "not_graded" and row["score"] == ""
        assert "grader_error: the grader failed (PoolError: the warm grading process has exited)" in row["note"]
    assert "bob" in (out / "summary.md").read_text()


# A child cannot read classmates' files in a class run: tests/test_sandbox.py,
# test_a_class_run_hides_its_output_classmates_the_checkout_and_the_graders_processes.


def test_student_folders_are_safe_names_that_never_collide():
    assert student_folder("bob") == "bob"
    names = [student_folder(s) for s in ("Bob", "bob", "B o/b", "../etc", "ünï", "bob.")]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", n) and not n.startswith(".") for n in names)


def test_a_name_shaped_like_a_hashed_folder_cannot_take_it():
    """ "jane doe" is stored as jane_doe-<hash of "jane doe">; a student whose file is named that cannot share it."""
    hashed = student_folder("jane doe")
    assert re.fullmatch(r"jane_doe-[0-9a-f]{16}", hashed)
    assert student_folder(hashed) != hashed and student_folder(hashed).startswith(hashed + "-")
    assert student_folder("jane doe") == hashed  # stable across runs: a pure function of the id
    assert len(student_folder("x" * 300)) < 100


# --- a hostile class folder (#13.5-#13.9, #14.9) ----------------------------------------------------------

HOSTILE_NAMES = {  # file name (bytes) -> variant
    b"alice.py": "reference.py",
    b"caf\xe9.py": "reference.py",                       # not UTF-8: still full marks
    b"\x1b[31mevil\nname.py": "reference.py",            # a terminal escape and a newline
    b"<img src=x onerror=alert(1)>.py": "wrong/value_mean.py",
    b"=cmd.py": "reference.py",                          # a spreadsheet formula
    b"@everyone.py": "wrong/value_mean.py",
    b"jane doe.py": "reference.py",                      # stored as jane_doe-<hash of "jane doe">
    b"jane_doe-" + student_folder("jane doe")[-16:].encode() + b".py": "wrong/value_mean.py",  # ... imitated
}


def _jaxgrade(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The real command, with umask 0: whatever it writes must be private by itself, not by umask."""
    return subprocess.run([str(Path(sys.executable).parent / "jaxgrade"), *args], env=env, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=lambda: os.umask(0), errors="surrogateescape")


@pytest.fixture(scope="module")
def hostile_run(exercises_root, tmp_path_factory):
    """One real `jaxgrade grade` of a class folder built to break it; the tests below read what it left."""
    base = tmp_path_factory.mktemp("hostile")
    folder = base / "class"
    folder.mkdir()
    for name, variant in HOSTILE_NAMES.items():
        with open(os.path.join(os.fsencode(folder), name), "wb") as handle:
            handle.write((SEED_EXERCISE / variant).read_bytes())
    (folder / "empty.py").write_text("")                                  # graded, as `check` grades it
    (folder / "bob").mkdir()
    (folder / "bob" / "solution.py").symlink_to("../alice.py")            # a classmate's file: refused
    secret = base / "secret.py"
    secret.write_bytes((SEED_EXERCISE / "reference.py").read_bytes())
    secret.chmod(0o600)
    (folder / "carol.py").symlink_to(secret)                              # a file outside: refused, unread
    os.mkfifo(folder / "dave.py")                                         # a FIFO: listed, never opened
    out = base / "out"
    env = {**os.environ, "JAXGRADE_EXERCISES": str(exercises_root)}
    done = _jaxgrade("grade", str(folder), "-e", SEED_EXERCISE.name, "-o", str(out), "-j", "2",
                     "--gradebook", "moodle", env=env)
    return {"folder": folder, "out": out, "done": done}


def test_a_hostile_class_folder_is_graded_and_the_rest_listed(hostile_run, exercise):
    done, out = hostile_run["done"], hostile_run["out"]
    assert done.returncode == 0, done.stderr
    book = gradebook(out)
    assert {s: book[s]["status"] for s in book} == {
        "alice": "passed", "caf\\xe9": "passed", "\\x1b[31mevil\\nname": "passed",
        "<img src=x onerror=alert(1)>": "failed", "'=cmd": "passed", "'@everyone": "failed", "empty": "failed",
        "bob": "not_graded", "carol": "not_graded", "dave": "not_graded",
        "jane doe": "passed", student_folder("jane doe"): "failed"}
    # each in a folder of its own: the imitation neither overwrote nor was overwritten
    for student in ("jane doe", student_folder("jane doe")):
        stored = json.loads((out / "students" / student_folder(student) / "result.json").read_text())
        assert stored["student"] == student
    assert book["caf\\xe9"]["score"] == "10"  # the reference under a name that is not UTF-8: full marks
    assert book["bob"]["note"].startswith("link: ") and book["carol"]["note"].startswith("link: ")
    assert book["dave"]["note"].startswith("special: a FIFO")
    # An empty file gets what `jaxgrade check` gives it (the exec'd child, one by one).
    alone = grade(exercise, hostile_run["folder"] / "empty.py")
    stored = json.loads((out / "students" / "empty" / "result.json").read_text())
    assert verdicts(stored["report"]["checks"]) == verdicts(alone.checks) and alone.score == 0


def test_no_name_reaches_the_terminal_the_csv_or_the_markdown_raw(hostile_run):
    done, out = hostile_run["done"], hostile_run["out"]
    for stream in (done.stdout, done.stderr):
        assert "\x1b" not in stream and "\r" not in stream
    progress = done.stderr.splitlines()
    assert all(line.startswith(("[", "jaxgrade: ")) for line in progress), progress  # no line split by a name
    assert "] \\x1b[31mevil\\nname: 10/10 passed" in done.stderr
    assert "] caf\\xe9: 10/10 passed" in done.stderr
    gradebook_text = (out / "gradebook.csv").read_text()
    assert "\x1b" not in gradebook_text and gradebook_text.count("\n") == 1 + 12
    md = (out / "summary.md").read_text()
    for raw in ("\x1b", "<img", "@everyone", "\r"):
        assert raw not in md, raw
    assert "&lt;img src=x onerror=alert(1)&gt;" in md


def test_everything_written_under_out_is_private(hostile_run):
    out = hostile_run["out"]
    modes = {path.relative_to(out).as_posix(): stat.S_IMODE(path.lstat().st_mode) for path in out.rglob("*")}
    assert modes and "gradebook.csv" in modes and "students/alice/report.html" in modes
    assert {p: m for p, m in modes.items() if m != (0o700 if (out / p).is_dir() else 0o600)} == {}
    assert stat.S_IMODE(out.stat().st_mode) == 0o700


def test_a_moodle_worksheet_is_not_written_for_a_folder_that_is_not_moodles(hostile_run):
    assert "not a Moodle download" in hostile_run["done"].stderr
    assert not (hostile_run["out"] / "gradebook-moodle.csv").exists()


def test_a_class_run_leaves_nothing_in_the_temporary_folder_whatever_a_submission_raises(exercises_root, tmp_path):
    """Issue #64: a grading process that shrank a failing value check's example (an exception
    carrying a lone surrogate, a wrong mean) made Hypothesis's folder and left by ``os._exit``,
    past the clean-up ``atexit`` runs: a ``jaxgrade-hypothesis-*`` folder was left per run."""
    folder = make_class(tmp_path / "class", {"alice": "reference.py", "bob": "wrong/value_mean.py"})
    shutil.copyfile(HOSTILE / "lone_surrogate_error.py", folder / "carol.py")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "JAXGRADE_EXERCISES": str(exercises_root), "TMPDIR": str(scratch)}
    # twice: the second run finds the drawn inputs kept, so only the grading processes use Hypothesis
    for run in ("first", "second"):
        done = _jaxgrade("grade", str(folder), "-e", SEED_EXERCISE.name, "-o", str(tmp_path / run), "-j", "2", env=env)
        assert done.returncode == 0, done.stderr
        assert {s: row["status"] for s, row in gradebook(tmp_path / run).items()} == {
            "alice": "passed", "bob": "failed", "carol": "failed"}
        assert [p.name for p in scratch.iterdir() if p.name.startswith("jaxgrade")] == [], run


# --- results the grader's environment decided are graded again (#13.3) -------------------------------------

SCRATCH_CHECK = '''

import os as _os
from grader.checks.base import Check as _Check
from grader.outcome import Outcome as _Outcome


class _Scratch(_Check):
    """Needs the grader's own disk, like the checks that ran out of it in #13.3."""
    category = "limits"

    def judge(self, context):
        if _os.path.exists(_os.environ["JAXGRADE_TEST_DISK_FULL"]):
            raise OSError(28, "No space left on device")
        return _Outcome.passed("The grader had room to work.")


CHECKS.append(_Scratch(id="limits.scratch", title="The grader has scratch space"))
'''


@pytest.mark.slow
def test_a_result_the_graders_environment_decided_is_graded_again(exercise, tmp_path, monkeypatch):
    copy = tmp_path / "exercises" / SEED_EXERCISE.name
    shutil.copytree(exercise.directory, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "checks.py", "a") as handle:
        handle.write(SCRATCH_CHECK)
    with open(copy / "exercise.toml", "a") as handle:
        handle.write('"limits.scratch" = 1\n')
    flaky = load_exercise(copy)
    disk_full = tmp_path / "disk-full"
    disk_full.touch()
    monkeypatch.setenv("JAXGRADE_TEST_DISK_FULL", str(disk_full))
    folder = make_class(tmp_path / "class", {"alice": "reference.py"})
    out = tmp_path / "out"

    first = grade_class(flaky, folder, out, jobs=1)
    stored = json.loads((out / "students" / "alice" / "result.json").read_text())
    assert first.graded == ["alice"] and {c["id"]: c["status"] for c in stored["report"]["checks"]}[
        "limits.scratch"] == "error"
    assert stored["key"] is None  # written for reading, never reused
    assert gradebook(out)["alice"]["limits.scratch"] == "0"

    disk_full.unlink()  # the machine is fixed: the same submission, exercise and seed are graded again
    second = grade_class(flaky, folder, out, jobs=1)
    assert second.graded == ["alice"] and second.reused == []
    assert gradebook(out)["alice"]["status"] == "passed" and gradebook(out)["alice"]["score"] == "11"

    third = grade_class(flaky, folder, out, jobs=1)  # a result the student's code decided is reused
    assert third.graded == [] and third.reused == ["alice"]


# --- Canvas and Moodle downloads, graded and imported (#14.3, #14.6) ----------------------------------------


def _points(exercise, variant: str) -> str:
    """The score `jaxgrade check` gives a variant, as the LMS's importer reads it."""
    return f"{grade(exercise, SEED_EXERCISE / variant).score:g}"


def _canvas_download(folder: Path, attachment_base: int) -> Path:
    folder.mkdir(parents=True)
    files = {"doejane_12345_{a}_solution.py": "wrong/value_mean.py",          # first upload: wrong
             "doejane_12345_{b}_solution-1.py": "reference.py",              # resubmitted: the one graded
             "roebob_LATE_222_{c}_main.py": "wrong/value_mean.py"}
    for index, (name, variant) in enumerate(files.items()):
        numbers = {"a": attachment_base, "b": attachment_base + 50, "c": attachment_base + 7}
        shutil.copyfile(SEED_EXERCISE / variant, folder / name.format(**numbers))
    (folder / "smithann_444_text.html").write_text("<p>I wrote it in the text box</p>")
    return folder


@pytest.mark.slow
def test_a_canvas_download_is_graded_per_student_and_imports_into_canvas(exercise, exercises_root, tmp_path):
    from test_gradebook import canvas_import
    env = {**os.environ, "JAXGRADE_EXERCISES": str(exercises_root)}
    out = tmp_path / "out"
    first = _jaxgrade("grade", str(_canvas_download(tmp_path / "download-1", 67890)), "-e", SEED_EXERCISE.name,
                      "-o", str(out), "-j", "2", "--gradebook", "canvas", "--assignment", "Lab 3 (98765)", env=env)
    assert first.returncode == 0, first.stderr
    assert "Read as a Canvas download" in first.stdout and "doejane (12345): 10/10 passed" in first.stderr
    book = gradebook(out)
    assert {s: (r["name"], r["late"], r["status"]) for s, r in book.items()} == {
        "12345": ("doejane", "no", "passed"), "222": ("roebob", "yes", "failed"),
        "444": ("smithann", "", "not_graded")}
    imported = canvas_import((out / "gradebook-canvas.csv").read_text())
    assert imported["assignments"] == [("Lab 3", "98765")] and imported["points"] == ["10"]
    assert [(s["id"], s["grades"]) for s in imported["students"]] == [
        ("12345", ["10"]), ("222", [_points(exercise, "wrong/value_mean.py")]), ("444", [""])]
    # Downloaded again a week later: new attachment ids, the same students and files, so nothing is regraded.
    again = _jaxgrade("grade", str(_canvas_download(tmp_path / "download-2", 70000)), "-e", SEED_EXERCISE.name,
                      "-o", str(out), "--gradebook", "canvas", env=env)
    assert again.returncode == 0, again.stderr
    assert "0 graded, 2 unchanged since the last run" in again.stdout
    assert set(gradebook(out)) == set(book)


@pytest.mark.slow
def test_a_moodle_download_is_graded_per_participant_and_writes_the_worksheet(exercise, exercises_root, tmp_path):
    from test_gradebook import moodle_import
    download = tmp_path / "download"
    for folder, variant in {"Jane Doe_1234567_assignsubmission_file_": "reference.py",
                            "Bob Roe_7654321_assignsubmission_file_": "wrong/value_mean.py"}.items():
        (download / folder).mkdir(parents=True)
        shutil.copyfile(SEED_EXERCISE / variant, download / folder / "solution.py")
    (download / "Jane Doe_1234567_assignsubmission_onlinetext_").mkdir()
    (download / "Jane Doe_1234567_assignsubmission_onlinetext_" / "onlinetext.html").write_text("<p>hi</p>")
    out = tmp_path / "out"
    done = _jaxgrade("grade", str(download), "-e", SEED_EXERCISE.name, "-o", str(out), "-j", "2",
                     "--gradebook", "moodle", env={**os.environ, "JAXGRADE_EXERCISES": str(exercises_root)})
    assert done.returncode == 0, done.stderr
    assert "note: 1 Moodle folder of online text" in done.stdout
    assert {s: (r["name"], r["status"]) for s, r in gradebook(out).items()} == {
        "1234567": ("Jane Doe", "passed"), "7654321": ("Bob Roe", "failed")}
    imported = moodle_import((out / "gradebook-moodle.csv").read_text())
    assert [(r["participant"], r["grade"]) for r in imported] == [
        ("1234567", "10"), ("7654321", _points(exercise, "wrong/value_mean.py"))]
    assert all(r["modified"] is not None for r in imported)
    assert "Left aside on purpose" in (out / "summary.md").read_text()


@pytest.mark.slow
def test_a_class_too_small_to_repay_the_variants_is_graded_without_their_gradings(exercise, tmp_path, monkeypatch):
    from grader.cache import warmed_marker
    from grader.engine import VARIANT_PAYBACK, variants_repay, warming_variants
    monkeypatch.setenv("JAXGRADE_CACHE", str(tmp_path / "cache"))
    warming = len(warming_variants(exercise))
    assert warming > 10 and not variants_repay(exercise, VARIANT_PAYBACK * warming - 1)
    assert variants_repay(exercise, VARIANT_PAYBACK * warming)
    folder = make_class(tmp_path / "class", {"alice": "reference.py", "bob": "wrong/value_mean.py"})
    outcome = grade_class(exercise, folder, tmp_path / "out", jobs=2)
    assert sorted(outcome.graded) == ["alice", "bob"]
    assert warmed_marker(exercise.slug, exercise.fingerprint).exists()  # the reference filled the cache
    assert not warmed_marker(exercise.slug, exercise.fingerprint, "variants").exists()
    assert gradebook(tmp_path / "out")["alice"]["status"] == "passed"


@pytest.mark.slow
def test_a_class_run_warms_the_cache_from_the_variants_once(exercise, tmp_path, monkeypatch):
    from grader import engine
    from grader.batch.run import prepare
    from grader.cache import warmed_marker
    monkeypatch.setenv("JAXGRADE_CACHE", str(tmp_path / "cache"))
    reference_only = prepare(exercise, 0, variants=False)  # as validate prepares: it grades the variants itself
    assert reference_only is not None and not warmed_marker(exercise.slug, exercise.fingerprint, "variants").exists()
    from_reference = len(os.listdir(reference_only))
    assert prepare(exercise, 0) == reference_only
    assert len(os.listdir(reference_only)) > from_reference  # what the wrong variants compiled (other meshes...)
    assert warmed_marker(exercise.slug, exercise.fingerprint, "variants").exists()
    monkeypatch.setattr(engine, "grade", lambda *args, **kwargs: pytest.fail("warmed twice"))
    prepare(exercise, 0)
