"""The runner's file commands ($GITHUB_OUTPUT, $GITHUB_ENV, $GITHUB_PATH, $GITHUB_STEP_SUMMARY:
grader.runner_files) against a submission that appends to them during its call
(tests/hostile/forges_step_output.py), through ``jaxgrade check --format classroom`` run as a
GitHub runner runs a step: a real subprocess, the variables naming files in the runner's
``_temp/_runner_file_commands`` folder, read back as the runner and Classroom's reporter read them.

Where the child makes a mount namespace (root here) the files are hidden from it, and the step's
output is jaxgrade's own under a fresh delimiter. Where it cannot (an unprivileged runner
without user namespaces: the grader as nobody in a user namespace whose limit of nested ones is
0), Landlock keeps it out where the kernel has it; else it can write them, and jaxgrade then
writes nothing after what it wrote and exits 3.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE
from grader.child import landlock
from grader.runner_files import FILE_COMMANDS, Snapshot, output_line
from grader.errors import RunnerFilesChanged
from test_render import classroom_reporter_reads, step_outputs
from test_sandbox import AS_NOBODY, ROOT, WITHOUT_NAMESPACES

SLUG = "named_sharding_replicated"
HOSTILE = Path(__file__).resolve().parent / "hostile" / "forges_step_output.py"
EARLIER = {"GITHUB_OUTPUT": "earlier=1\n", "GITHUB_ENV": "EARLIER=1\n", "GITHUB_PATH": "/opt/earlier\n",
           "GITHUB_STEP_SUMMARY": "earlier step\n"}


def _runner(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The runner's file-command files, each holding an earlier step's line, writable by anyone
    (so that only hiding or the check keeps the child out), and the hostile submission naming them."""
    commands = tmp_path / "_temp" / "_runner_file_commands"
    commands.mkdir(parents=True)
    files = {}
    for name in FILE_COMMANDS:
        path = commands / f"{name.lower()}_0b6e"
        path.write_text(EARLIER[name])
        path.chmod(0o666)
        files[name] = str(path)
    for folder in (tmp_path, tmp_path / "_temp", commands):
        folder.chmod(0o777)
    work = tmp_path / "work"
    work.mkdir(mode=0o777)
    work.chmod(0o777)
    submission = work / f"{SLUG}.py"
    submission.write_text(HOSTILE.read_text().replace("{OUTPUT}", repr(files["GITHUB_OUTPUT"]))
                          .replace("{ENV}", repr(files["GITHUB_ENV"])))
    submission.chmod(0o644)
    return files, submission


def _check(submission: Path, files: dict[str, str], prefix: list[str] = ()) -> subprocess.CompletedProcess:
    home = submission.parent
    env = {**os.environ, **files, "CI": "true", "HOME": str(home), "JAXGRADE_CACHE": "off", "PYTHONPATH": str(REPO)}
    env.pop("JAXGRADE_EXERCISES", None)
    return subprocess.run([*prefix, sys.executable, "-m", "grader", "check", submission.name, "-e", SLUG,
                           "--format", "classroom"], cwd=home, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.skipif(not ROOT, reason="the child hides the files in a mount namespace it makes as root here")
def test_hidden_from_the_child_the_step_output_is_jaxgrades_own(tmp_path):
    files, submission = _runner(tmp_path)
    _jaxgrades_own(files, _check(submission, files))


def _jaxgrades_own(files: dict[str, str], done: subprocess.CompletedProcess) -> None:
    """The step's output is jaxgrade's own, after the earlier step's: the child wrote nothing."""
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name in ("GITHUB_ENV", "GITHUB_PATH"):
        assert Path(files[name]).read_text() == EARLIER[name]
    written = Path(files["GITHUB_OUTPUT"]).read_text()
    assert written.startswith(EARLIER["GITHUB_OUTPUT"] + "result<<ghadelimiter_") and "ignored" not in written
    assert re.fullmatch(r"earlier=1\nresult<<(ghadelimiter_[0-9a-f]{32})\n[A-Za-z0-9+/=]+\n\1\n", written), written
    read = classroom_reporter_reads("jaxgrade", {"JAXGRADE_RESULTS": step_outputs(written)["result"]})
    assert read["points"] == (10, 10) and all(t["name"] != "forged" for t in read["results"][0]["tests"])
    assert Path(files["GITHUB_STEP_SUMMARY"]).read_text().startswith(EARLIER["GITHUB_STEP_SUMMARY"] + "# jaxgrade")


@pytest.mark.slow
@pytest.mark.skipif(not ROOT or not shutil.which("setpriv") or landlock.version() < 1,
                    reason="needs root to set up an unprivileged grader without namespaces, and Landlock")
def test_an_unprivileged_runner_without_namespaces_keeps_the_child_out_with_landlock(tmp_path):
    """Without any namespace, Landlock leaves the child nothing writable but its scratch: its
    appends fail, and the step's output is jaxgrade's own."""
    files, submission = _runner(tmp_path)
    _jaxgrades_own(files, _check(submission, files, prefix=[sys.executable, "-c", WITHOUT_NAMESPACES, *AS_NOBODY]))


@pytest.mark.slow
@pytest.mark.skipif(not ROOT or not shutil.which("setpriv") or landlock.version() >= 1,
                    reason="needs root to set up an unprivileged grader without namespaces, and a kernel "
                           "without Landlock (with it, the test above)")
def test_an_unprivileged_runner_without_namespaces_refuses_to_report_after_a_forgery(tmp_path):
    """The child runs as the runner's user and can append: the grader finds the files changed,
    writes no result, no summary, and exits 3; the runner then fails the step (the unterminated
    ``ignored<<`` block), so Classroom records nothing, never the forged 10/10."""
    files, submission = _runner(tmp_path)
    done = _check(submission, files, prefix=[sys.executable, "-c", WITHOUT_NAMESPACES, *AS_NOBODY])
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
    assert "the runner's file commands changed while the submission was graded" in done.stderr
    assert f"$GITHUB_OUTPUT ({files['GITHUB_OUTPUT']}: 10 bytes before" in done.stderr
    assert "$GITHUB_ENV" in done.stderr and "internal error" not in done.stderr
    written = Path(files["GITHUB_OUTPUT"]).read_text()
    assert written.startswith(EARLIER["GITHUB_OUTPUT"] + "result=") and written.endswith("ignored<<result=\n")
    assert "ghadelimiter" not in written  # nothing of jaxgrade's after the forgery
    with pytest.raises(ValueError, match="Matching delimiter not found"):
        step_outputs(written)
    assert Path(files["GITHUB_STEP_SUMMARY"]).read_text() == EARLIER["GITHUB_STEP_SUMMARY"]
    assert Path(files["GITHUB_PATH"]).read_text() == EARLIER["GITHUB_PATH"]
    assert "Score" not in done.stdout  # no report at all


def test_a_snapshot_sees_an_append_a_rewrite_of_the_same_size_and_a_new_file(tmp_path):
    output, env = tmp_path / "output", tmp_path / "env"
    output.write_text("a=1\n")
    environ = {"GITHUB_OUTPUT": str(output), "GITHUB_ENV": str(env), "HOME": "/unrelated"}
    taken = Snapshot.take(environ)
    taken.verify()  # nothing changed
    output.write_text("a=2\n")
    with pytest.raises(RunnerFilesChanged, match=r"\$GITHUB_OUTPUT .*4 bytes before, 4 bytes now"):
        taken.verify()
    output.write_text("a=1\n")
    env.write_text("X=1\n")
    with pytest.raises(RunnerFilesChanged, match=r"\$GITHUB_ENV .*no file before, 4 bytes now"):
        taken.verify()


def test_each_output_ends_with_a_fresh_delimiter():
    first, second = output_line("result", "abc"), output_line("result", "abc")
    assert first != second
    assert step_outputs(first) == step_outputs(second) == {"result": "abc"}
    value = base64.b64encode(json.dumps({"version": 1}).encode()).decode()
    assert step_outputs("earlier=1\n" + output_line("result", value))["result"] == value
