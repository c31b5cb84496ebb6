"""The jaxgrade command, run as a real subprocess the way students and CI run it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE

JAXGRADE = [sys.executable, "-m", "grader"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([*JAXGRADE, *args], capture_output=True, text=True, cwd=cwd or REPO, env=env, timeout=120)


@pytest.mark.slow
def test_check_reference_exits_0_and_reports_full_marks():
    result = run("check", str(SEED_EXERCISE / "reference.py"))
    assert result.returncode == 0, result.stderr
    assert "Score: 10/10" in result.stdout and "all checks passed" in result.stdout
    assert "\033[" not in result.stdout  # no colour when not on a terminal


def test_check_wrong_exits_1_with_expected_observed_hint_and_reproduce(tmp_path):
    submission = tmp_path / "my_solution.py"
    submission.write_text((SEED_EXERCISE / "wrong" / "structure_all_devices.py").read_text())
    result = run("check", "my_solution.py", cwd=tmp_path)
    assert result.returncode == 1
    out = result.stdout
    assert "FAIL  The mesh is jax.devices()[:1] with axis 'data'" in out
    assert "expected:" in out and "observed:" in out and "hint:" in out
    assert "jaxgrade check my_solution.py -e named_sharding_replicated --seed 0" in out
    assert "Score: 9/10" in out


def test_json_format_to_file(tmp_path):
    target = tmp_path / "report.json"
    result = run("check", str(SEED_EXERCISE / "wrong" / "value_mean.py"), "-e", "named_sharding_replicated",
                 "--format", "json", "-o", str(target))
    assert result.returncode == 1 and result.stdout == ""
    data = json.loads(target.read_text())
    assert data["exercise"] == "named_sharding_replicated" and data["status"] == "failed"


@pytest.mark.parametrize("args, message", [
    (("check", "does_not_exist.py"), "no such file: does_not_exist.py"),
    (("check", "Makefile", "-e", "no_such_exercise"), "unknown exercise 'no_such_exercise'"),
    (("check", "Makefile"), "cannot tell which exercise"),
    (("check", "Makefile", "--format", "pdf"), "invalid choice: 'pdf'"),
    (("check",), "the following arguments are required: file"),
    (("frobnicate",), "invalid choice: 'frobnicate'"),
    (("start", "no_such_exercise"), "unknown exercise 'no_such_exercise'; known exercises:"),
])
def test_usage_errors_exit_2_with_one_line(args, message):
    result = run(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jaxgrade: ") and message in lines[0]


def test_exercise_found_from_the_function_defined(tmp_path):
    submission = tmp_path / "attempt.py"
    submission.write_text((SEED_EXERCISE / "wrong" / "load_syntax_error.py").read_text())
    result = run("check", str(submission))  # no -e: found even though the file does not parse
    assert result.returncode == 1
    assert "Python cannot parse your file" in result.stdout and "SKIP" in result.stdout


def test_a_misspelt_exercise_gets_did_you_mean_in_one_line():
    result = run("check", "Makefile", "-e", "named_sharding_replcated")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("jaxgrade: unknown exercise 'named_sharding_replcated': did you mean "
                             "named_sharding_replicated? (jaxgrade list shows them all)\n")


def test_none_and_several_candidate_functions_are_different_messages(tmp_path):
    two = tmp_path / "two.py"
    two.write_text("def replicated_sharding_value(x):\n    return x\n\n\ndef row_sums(x):\n    return x\n")
    result = run("check", str(two))
    assert result.returncode == 2 and result.stdout == ""
    line, = result.stderr.splitlines()
    assert "defines none" not in line
    assert "it defines the functions of 2 exercises, replicated_sharding_value (named_sharding_replicated), " \
           "row_sums (shard_rows). Pick one with -e SLUG" in line
    none = tmp_path / "none.py"
    none.write_text("def my_function(x):\n    return x\n")
    result = run("check", str(none))
    assert result.returncode == 2 and "it defines none of the exercises' functions. Pass -e SLUG" in result.stderr


@pytest.mark.slow
def test_start_writes_the_starter_and_refuses_to_overwrite(tmp_path):
    result = run("start", "named_sharding_replicated", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = tmp_path / "named_sharding_replicated.py"
    text = written.read_text()
    assert text.startswith('"""NamedSharding (replicated).') and "jax.devices()[:1]" in text
    assert "jaxgrade check named_sharding_replicated.py" in text
    again = run("start", "named_sharding_replicated", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr
    # The untouched starter loads but is not a solution: it fails, with exit code 1.
    checked = run("check", "named_sharding_replicated.py", cwd=tmp_path)
    assert checked.returncode == 1 and "NotImplementedError" in checked.stdout


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "jaxgrade"
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("jaxgrade ")


@pytest.mark.skipif(os.geteuid() != 0, reason="dedicated sandbox uids (and their lock folder) are used only as root")
def test_a_broken_sandbox_is_an_error_report_exit_3_not_a_crash(tmp_path):
    import ctypes
    full = tmp_path / "full"  # a temporary directory with room for one more file or folder, not two:
    full.mkdir()  # the submission's folder is made, its scratch folder inside it cannot be
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.mount(b"tmpfs", str(full).encode(), b"tmpfs", 0, b"size=1m,nr_inodes=2") == 0
    env = {**os.environ, "NO_COLOR": "1", "TMPDIR": str(full)}
    try:
        result = subprocess.run([*JAXGRADE, "check", str(SEED_EXERCISE / "reference.py"), "--format", "json"],
                                capture_output=True, text=True, env=env, timeout=120, cwd=REPO)
    finally:
        libc.umount2(str(full).encode(), 2)
    assert result.returncode == 3, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "error" and data["score"] == 0
    assert all(c["status"] == "error" and "sandbox could not be set up" in c["message"] for c in data["checks"])


# --- a crash of jaxgrade itself (#13.11) -------------------------------------------------------------------

BROKEN_GRADER = ("import sys, grader.engine\n"
                 "def broken(*args, **kwargs):\n"
                 "    raise RuntimeError('an unexpected state in the grader')\n"
                 "grader.engine.grade = broken  # a bug in jaxgrade, put where a real one would be\n"
                 "from grader.cli import main\n"
                 "sys.exit(main(sys.argv[1:]))\n")


def test_a_crash_of_jaxgrade_itself_exits_4_with_one_line_saying_so():
    command = [sys.executable, "-c", BROKEN_GRADER, "check", str(SEED_EXERCISE / "reference.py")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=120,
                            env={k: v for k, v in os.environ.items() if k != "JAXGRADE_DEBUG"})
    assert result.returncode == 4 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("jaxgrade: internal error (RuntimeError: an unexpected state in the grader at ")
    assert "This is a bug in jaxgrade" in line and "not in the submission and not a grade" in line
    assert "report it" in line and "JAXGRADE_DEBUG=1" in line
    debug = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=120,
                           env={**os.environ, "JAXGRADE_DEBUG": "1"})
    assert debug.returncode == 4 and "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.strip().splitlines()[-1] == line


# The grader's own process without one of its dependencies, as a Python whose path was set by hand
# leaves it (seen on a TPU host: nbformat missing): a blocker standing in for the module.
MISSING_DEPENDENCY = ("import sys\n"
                      "class Missing:\n"
                      "    def find_spec(self, name, path=None, target=None):\n"
                      "        if name == 'nbformat':\n"
                      "            raise ModuleNotFoundError(\"No module named 'nbformat'\", name='nbformat')\n"
                      "sys.meta_path.insert(0, Missing())\n"
                      "from grader.cli import main\n"
                      "sys.exit(main(sys.argv[1:]))\n")


def test_a_missing_dependency_says_which_and_how_to_install_it(tmp_path):
    result = subprocess.run([sys.executable, "-c", MISSING_DEPENDENCY, "start", SEED_EXERCISE.name, "--notebook",
                             "-o", str(tmp_path / "start.ipynb")], capture_output=True, text=True, cwd=REPO,
                            timeout=120, env={k: v for k, v in os.environ.items() if k != "JAXGRADE_DEBUG"})
    assert result.returncode == 3 and not (tmp_path / "start.ipynb").exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("jaxgrade needs nbformat: pip install nbformat (")
    assert "This is a bug" not in lines[0] and "internal error" not in lines[0]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_a_machine_that_refuses_to_write_is_exit_4_not_a_grade():
    result = run("check", str(SEED_EXERCISE / "reference.py"), "-o", "/dev/full")  # a full disk, for real
    assert result.returncode == 4
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0] and "the machine refused" in lines[0]


# --- LMS points and columns (jaxgrade grade --points / --lms-file) -------------------------------------------


@pytest.mark.parametrize("flags, message", [
    (("--points", "25"), "--points and --lms-file are for the LMS gradebooks: add --gradebook canvas or moodle"),
    (("--gradebook", "canvas", "--points", "0"), "--points must be a number above 0"),
    (("--gradebook", "moodle", "--points", "inf"), "--points must be a number above 0"),
    (("--gradebook", "canvas", "--lms-file", "Makefile"), "is neither Canvas's gradebook export"),
])
def test_lms_flags_are_checked_before_grading(tmp_path, flags, message):
    (tmp_path / "alice.py").write_text("x = 1\n")
    result = run("grade", str(tmp_path), "-e", SEED_EXERCISE.name, "-o", str(tmp_path / "out"), *flags)
    assert result.returncode == 2 and message in result.stderr
    assert not (tmp_path / "out").exists()  # nothing graded, nothing written


@pytest.mark.slow
def test_a_moodle_run_with_the_worksheet_gives_grades_out_of_its_maximum_with_comments(tmp_path):
    from test_gradebook import MOODLE_WORKSHEET, moodle_import
    download = tmp_path / "download" / "Jane Doe_1234567_assignsubmission_file_"
    download.mkdir(parents=True)
    (download / "solution.py").write_text((SEED_EXERCISE / "wrong" / "value_mean.py").read_text())
    empty = download.parent / "Bob Roe_7654321_assignsubmission_file_"  # two folders: not one wrapping folder
    empty.mkdir()
    (empty / "solution.py").write_text("")
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(MOODLE_WORKSHEET)
    out = tmp_path / "out"
    result = run("grade", str(download.parent), "-e", SEED_EXERCISE.name, "-o", str(out), "-j", "1",
                 "--gradebook", "moodle", "--lms-file", str(worksheet))
    assert result.returncode == 0, result.stderr
    assert "LMS points: each score scaled from 10 points to 100" in result.stdout
    row, empty_row = moodle_import((out / "gradebook-moodle.csv").read_text())
    assert (empty_row["grade"], empty_row["maximum"]) == ("0", "100")
    assert (row["participant"], row["grade"], row["maximum"]) == ("1234567", "70", "100")
    assert row["comments"].startswith("jaxgrade: ") and "report: students/1234567/report.html" in row["comments"]
    assert (out / "students" / "1234567" / "report.html").is_file()


@pytest.mark.slow
def test_a_canvas_column_without_an_assignment_id_is_said_and_an_id_alone_makes_one(tmp_path):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "alice.py").write_text("")
    out = tmp_path / "out"
    bare = run("grade", str(tmp_path / "class"), "-e", SEED_EXERCISE.name, "-o", str(out), "--gradebook", "canvas")
    assert bare.returncode == 0 and "the Canvas column has no assignment id" in bare.stderr
    by_id = run("grade", str(tmp_path / "class"), "-e", SEED_EXERCISE.name, "-o", str(out), "--gradebook", "canvas",
                "--assignment", "98765", "--points", "5")
    assert by_id.returncode == 0 and "no assignment id" not in by_id.stderr
    header, points = (out / "gradebook-canvas.csv").read_text().splitlines()[:2]
    assert header.endswith(",NamedSharding (replicated) (98765)") and points.endswith(",5")


@pytest.mark.slow  # a validation of one exercise (its reference and every variant, one seed)
def test_check_grade_and_validate_leave_nothing_in_the_current_folder_but_the_outputs_asked_for(tmp_path):
    """Students and CI run jaxgrade in their own folder: nothing of jaxgrade's (Hypothesis's
    .hypothesis/ cache included) may appear there beside what -o names."""
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    (submissions / "alice.py").write_text((SEED_EXERCISE / "reference.py").read_text())
    (submissions / "bob.py").write_text((SEED_EXERCISE / "wrong" / "value_mean.py").read_text())
    here = tmp_path / "here"
    here.mkdir()
    runs = {"check": run("check", str(submissions / "bob.py"), "-e", SEED_EXERCISE.name, cwd=here),
            "grade": run("grade", str(submissions), "-e", SEED_EXERCISE.name, "-o", "out", cwd=here),
            "validate": subprocess.run([*JAXGRADE, "validate", "pmean_gradients", "--seeds", "1"],
                                       capture_output=True, text=True, cwd=here, timeout=600,
                                       env={**os.environ, "NO_COLOR": "1"})}
    assert [runs["check"].returncode, runs["grade"].returncode, runs["validate"].returncode] == [1, 0, 0], \
        {name: done.stdout[-1500:] + done.stderr[-1500:] for name, done in runs.items()}
    assert "Score: " in runs["check"].stdout and (here / "out" / "gradebook.csv").is_file()
    assert sorted(p.name for p in here.iterdir()) == ["out"]
