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
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import SEED_EXERCISE
from grader.batch.run import grade_class, student_folder
from grader.engine import grade
from grader.exercise import load_exercise

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
    assert "`class.zip:export/readme.txt`" in summary and "<svg" in (out / "summary.html").read_text()


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


def test_an_interrupted_or_killed_run_keeps_its_results_and_the_next_run_continues(exercise, exercises_root, tmp_path):
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


def test_only_what_changed_is_regraded(exercise, exercises_root, tmp_path):
    folder = make_class(tmp_path / "class", {"alice": "reference.py", "bob": "wrong/value_mean.py",
                                             "carol": "wrong/load_wrong_name.py"})
    out = tmp_path / "out"
    first = grade_class(exercise, folder, out, jobs=2)
    assert sorted(first.graded) == ["alice", "bob", "carol"]

    unchanged = grade_class(exercise, folder, out, jobs=2)
    assert unchanged.graded == [] and sorted(unchanged.reused) == ["alice", "bob", "carol"]

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


def test_the_command_reports_what_it_did_and_where(exercises_root, tmp_path):
    folder = make_class(tmp_path / "class", {"alice": "wrong/load_wrong_name.py"})
    (folder / "empty.py").write_text("")
    out = tmp_path / "out"
    env = {**os.environ, "JAXGRADE_EXERCISES": str(exercises_root)}
    command = [str(Path(sys.executable).parent / "jaxgrade"), "grade", str(folder), "-e", SEED_EXERCISE.name,
               "-o", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 graded, 0 unchanged" in done.stdout and "1 entry not graded" in done.stdout
    assert "not graded: empty.py: empty" in done.stdout
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


PEEK = '''
import jax.numpy as jnp

def replicated_sharding_value(x):
    try:
        with open({path!r}) as handle:
            handle.read()
        seen = 1.0  # a classmate's file was readable: answer wrongly, so the test sees it
    except OSError:
        seen = 0.0
    return jnp.sum(x) + seen
'''


@pytest.fixture
def visible_folder():
    """A folder outside /tmp (children get a private /tmp) that a child could read if not hidden."""
    import tempfile
    from conftest import REPO
    (REPO / "out").mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="test-batch-", dir=REPO / "out"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_child_cannot_read_other_students_files(exercise, visible_folder):
    folder = visible_folder / "class"
    for student in ("alice", "bob"):
        (folder / student).mkdir(parents=True)
    shutil.copyfile(SEED_EXERCISE / "reference.py", folder / "bob" / "solution.py")
    (folder / "alice" / "solution.py").write_text(PEEK.format(path=str(folder / "bob" / "solution.py")))
    alone = grade(exercise, folder / "alice" / "solution.py")  # only alice's own folder hidden
    if {c.id: c.status for c in alone.checks}["value.random_vectors"] == "passed":
        pytest.skip("the sandbox hides this folder from children anyway")
    outcome = grade_class(exercise, folder, visible_folder / "out", jobs=1)
    values = {c["id"]: c["status"] for c in outcome.results["alice"]["report"]["checks"]}
    assert values["value.random_vectors"] == "passed"  # in a batch, bob's folder is hidden from alice's child
    assert outcome.results["bob"]["report"]["status"] == "passed"


def test_student_folders_are_safe_names_that_never_collide():
    assert student_folder("bob") == "bob"
    names = [student_folder(s) for s in ("Bob", "bob", "B o/b", "../etc", "ünï", "bob.")]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", n) and not n.startswith(".") for n in names)
