"""grader.sandbox.process and grader.sandbox.confine against the hostile corpus in tests/hostile/.

Every hostile submission is graded for real (real child processes, real JAX) with short
limits. Each test asserts the verdict and the message, that grading ended within its
limits plus slack (a functional bound, not a benchmark), that no file it attacked changed,
and that nothing it started is still running.
"""
from __future__ import annotations

import hashlib
import os
import re
import resource
import shutil
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import GRADER_ENVIRONMENT, REPO, SEED_EXERCISE
from grader import grade
from grader.sandbox.confine import Policy
from grader.report.result import Report
from grader.sandbox.process import (MARKER, Child, Limits, UidLease, child_environment, kill_uid, marked_processes,
                            processes_of_uid)

HOSTILE = Path(__file__).resolve().parent / "hostile"
LIMITS = Limits(call_s=2, total_s=20, startup_s=30, memory_mib=2048)
SLACK_S = 25.0  # starting JAX twice, a restart after each incident, cleanup, a loaded 2-core machine
ROOT = os.geteuid() == 0
FUNCTION = "replicated_sharding_value"


@dataclass
class Graded:
    report: Report
    seconds: float
    folder: Path

    def check(self, check_id: str):
        return next(c for c in self.report.checks if c.id == check_id)

    @property
    def output(self) -> str:
        return self.report.output["head"] + self.report.output["tail"]

    @property
    def protections(self) -> dict:
        return self.report.environment["protections"]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _still_running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as handle:
            state = next(line for line in handle if line.startswith("State:"))
    except (OSError, StopIteration):
        return False
    return not state.split()[1].startswith(("Z", "X"))


@pytest.fixture
def graded(seed_exercise, tmp_path):
    """Grade a hostile file as one student's submission in a class folder (next to another
    student's file), then check what must hold whatever the file did."""
    runs: list[Graded] = []

    def run(name: str, limits: Limits = LIMITS, **fill: str) -> Graded:
        folder = tmp_path / "class"
        folder.mkdir(exist_ok=True)
        (folder / "other_student.py").write_text("def replicated_sharding_value(x):\n    return x.sum()\n")
        source = (HOSTILE / name).read_text()
        for key, value in fill.items():
            source = source.replace("{" + key + "}", value)
        submission = folder / name
        submission.write_text(source)
        before = {p: _digest(p) for p in folder.iterdir()}
        started = time.monotonic()
        report = grade(seed_exercise, submission, limits=limits)
        seconds = time.monotonic() - started
        assert seconds < limits.total_s + limits.startup_s + SLACK_S, f"grading took {seconds:.1f} s"
        assert {p: _digest(p) for p in folder.iterdir()} == before, "the class folder changed"
        result = Graded(report, seconds, folder)
        runs.append(result)
        return result

    yield run
    left = marked_processes(f"{os.getpid()}-")
    assert not left, f"processes of this grader's children still run: {left}"
    for result in runs:
        for pid in map(int, re.findall(r"LEFT-BEHIND (\d+)", result.output)):
            assert not _still_running(pid), f"process {pid} the submission started still runs"


def statuses(result: Graded) -> dict[str, str]:
    return {c.id: c.status for c in result.report.checks}


# -- time ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["infinite_loop.py", "ignores_signals.py", "slow_calls.py"])
def test_code_that_never_returns_is_stopped_at_the_time_limit(graded, name):
    result = graded(name)
    assert result.report.status == "failed"
    assert statuses(result)["load.function"] == "passed"
    limits = result.check("limits.resources")
    assert limits.status == "failed"
    assert "ran past its time limit" in limits.message and "did not finish within 2 s" in limits.message


def test_a_hostile_repr_that_never_returns_costs_one_time_limit(graded):
    result = graded("fake_array_hangs.py")
    assert result.check("limits.resources").status == "failed"
    assert "did not finish within 2 s" in result.check("limits.resources").message
    assert result.check("type.float32_scalar").status == "failed"


# -- crashes ------------------------------------------------------------------------------------
# Once the XLA backend runs, a crash goes through its signal handler, which takes a while.
SLOW_CRASH = Limits(call_s=10, total_s=40, startup_s=30, memory_mib=2048)


@pytest.mark.parametrize("name, says, limits", [
    ("segfault.py", "crashed (SIGSEGV)", SLOW_CRASH),
    ("stack_overflow.py", "crashed (SIGSEGV)", SLOW_CRASH),
    ("sys_exit_in_call.py", "called sys.exit()", LIMITS),
    ("keyboard_interrupt.py", "raised KeyboardInterrupt", LIMITS),
    ("recursion.py", "recursed too deeply", LIMITS),
    ("memory_hog.py", "ran out of memory (limit 2048 MiB)", LIMITS),
])
def test_a_call_that_crashes_or_exhausts_a_limit_fails_limits_with_a_clear_message(graded, name, says, limits):
    result = graded(name, limits=limits)
    assert result.report.status == "failed"
    assert statuses(result)["load.function"] == "passed"
    limits = result.check("limits.resources")
    assert limits.status == "failed" and says in limits.message, limits.message
    assert "Traceback" not in limits.message


@pytest.mark.parametrize("name, says", [
    ("exit_at_import.py", "exited with code 3 while importing your file"),
    ("reads_stdin.py", "EOFError"),
])
def test_a_file_that_dies_or_waits_on_import_fails_load(graded, name, says):
    result = graded(name)
    load = result.check("load.function")
    assert load.status == "failed" and says in load.message, load.message
    assert result.report.status == "failed"
    assert all(c.status == "skipped" for c in result.report.checks if c.category not in ("load", "limits"))


def test_the_next_submission_is_graded_normally_after_a_crash(graded, seed_exercise):
    assert graded("segfault.py", limits=SLOW_CRASH).report.status == "failed"
    assert grade(seed_exercise, seed_exercise.reference, limits=LIMITS).status == "passed"


# -- output -------------------------------------------------------------------------------------
def test_an_output_flood_is_capped_and_never_parsed(graded):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = graded("output_flood.py", limits=Limits(call_s=20, total_s=40, startup_s=30, memory_mib=2048))
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert result.report.status == "passed", [(c.id, c.message) for c in result.report.checks]
    output = result.report.output
    assert output["total_bytes"] >= 256 << 20
    assert output["dropped_bytes"] >= (256 << 20) - (2 * LIMITS.output_kib << 10)
    assert len(output["head"]) <= LIMITS.output_kib << 10 and len(output["tail"]) <= LIMITS.output_kib << 10
    assert output["head"].startswith("FLOOD-HEAD") and "FLOOD-TAIL" in output["tail"]
    assert grown_mib < 128, f"the grader's memory grew by {grown_mib:.0f} MiB"


def test_forged_results_on_stdout_change_nothing(graded):
    result = graded("fake_json_stdout.py")
    assert '"score": 10.0' in result.output  # shown to the student as their output ...
    assert result.report.status == "failed" and result.report.score < result.report.max_score  # ... never believed
    assert statuses(result)["structure.placed"] == "failed"


# -- secrets and network ------------------------------------------------------------------------
def test_the_grader_environment_never_reaches_the_submission(graded, monkeypatch):
    monkeypatch.setenv("JAXGRADE_TEST_SECRET", "hunter2-secret-token")
    result = graded("env_snoop.py")
    assert "hunter2-secret-token" not in result.output
    seen = set(re.findall(r"\('([A-Za-z_0-9]+)', ", result.output.split("PARENT-ENV")[0]))
    assert "HOME" in seen and MARKER in seen
    leaked = (seen & set(GRADER_ENVIRONMENT)) - set(child_environment(8, "/nowhere", "0-0", "/cache"))
    assert not leaked, f"the grader's variables reached the submission: {leaked}"
    if ROOT:  # another uid may not read the grader's /proc/PID/environ
        assert "PARENT-ENV denied" in result.output


def test_the_network_is_unreachable(graded):
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                received.append(connection.recv(64))

    listener = threading.Thread(target=accept, daemon=True)
    listener.start()
    try:
        result = graded("network.py", PORT=str(server.getsockname()[1]))
    finally:
        stop.set()
        listener.join(2)
        server.close()
    if not result.protections["network"]["active"]:
        pytest.skip(f"no network namespace here: {result.protections['network']['detail']}")
    assert "NETWORK blocked" in result.output and not received


# -- processes ----------------------------------------------------------------------------------
def test_background_and_double_forked_processes_are_killed(graded):
    result = graded("background_processes.py")
    assert len(re.findall(r"LEFT-BEHIND (\d+)", result.output)) == 2, result.output
    assert statuses(result)["load.function"] == "passed"
    # the fixture asserts that both are gone


def test_a_thread_that_never_ends_does_not_keep_the_child_alive(graded):
    result = graded("never_ending_thread.py")
    assert result.report.status == "passed", [(c.id, c.message) for c in result.report.checks]


# -- cheating -----------------------------------------------------------------------------------
def test_patching_jax_gains_nothing(graded):
    result = graded("patch_jax.py")
    assert statuses(result)["value.random_vectors"] == "passed"  # the sum is right ...
    placed = result.check("structure.placed")
    assert placed.status == "failed", placed.message  # ... but nothing was placed
    assert "no jax.device_put of x happened" in placed.message.lower()
    assert result.report.status == "failed"


def test_patches_made_during_a_call_are_undone_before_the_next(graded):
    result = graded("patch_jax_in_call.py")
    assert result.report.status == "passed", [(c.id, c.message) for c in result.report.checks]


def test_patching_the_grader_gains_nothing(graded):
    result = graded("patch_grader.py")
    placed = result.check("structure.placed")
    assert placed.status == "failed", placed.message
    assert "no jax.device_put of x happened" in placed.message.lower()


def test_behaving_differently_when_traced_gains_nothing(graded):
    result = graded("trace_only_placement.py")
    assert statuses(result)["structure.placed"] == "failed"


def test_a_fake_array_gets_no_credit_and_cannot_crash_the_grader(graded):
    result = graded("fake_array.py")
    assert result.report.status == "failed"
    kind = result.check("type.float32_scalar")
    assert kind.status == "failed" and "Pretender" in kind.message and "unprintable" in kind.message
    assert statuses(result)["value.random_vectors"] == "failed"
    assert statuses(result)["limits.resources"] == "passed"


def test_garbage_on_the_channel_cannot_crash_the_grader(graded):
    result = graded("channel_forgery.py")
    limits = result.check("limits.resources")
    assert limits.status == "failed" and "broke the grading channel" in limits.message, limits.message
    assert result.report.status == "failed"


def test_an_array_subclass_in_disguise_gets_no_credit(graded):
    result = graded("fake_array_subclass.py")
    kind = result.check("type.float32_scalar")
    assert kind.status == "failed" and "an object of type" in kind.message, kind.message
    assert statuses(result)["value.random_vectors"] == "failed"
    assert statuses(result)["limits.resources"] == "passed"


@pytest.mark.skipif(not ROOT, reason="without root the child runs as the grader's user and can write what it "
                                     "can (docs/threat-model.md)")
def test_the_submission_cannot_write_the_graders_or_other_students_files(graded, tmp_path):
    install = tmp_path / "install"  # a copy with the same ownership and modes as a root-owned install
    shutil.copytree(REPO / "grader", install / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(SEED_EXERCISE, install / "exercises" / SEED_EXERCISE.name)
    for path in [install, *install.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    targets = [install / "grader" / "confine.py", install / "exercises" / SEED_EXERCISE.name / "reference.py",
               tmp_path / "class" / "other_student.py"]
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "other_student.py").write_text("def replicated_sharding_value(x):\n    return x.sum()\n")
    before = {p: _digest(p) for p in install.rglob("*") if p.is_file()}
    result = graded("writes_files.py", TARGETS=repr([str(t) for t in targets]))
    assert result.report.status == "passed", [(c.id, c.message) for c in result.report.checks]
    assert "DAMAGED" not in result.output
    assert {p: _digest(p) for p in install.rglob("*") if p.is_file()} == before
    assert result.protections["user"]["active"]


def test_the_report_says_which_protections_were_active(graded):
    result = graded("never_ending_thread.py")
    protections = result.protections
    for name in ("time", "environment", "output", "workdir", "cleanup", "limits", "user", "network", "descriptors"):
        assert name in protections and isinstance(protections[name]["active"], bool), name
    assert result.report.to_dict()["environment"]["protections"] == protections
    assert protections["user"]["active"] == ROOT


# -- the mechanisms, directly ------------------------------------------------------------------
def test_the_child_is_confined_before_the_submission_runs(tmp_path):
    """A child that is never given a submission: what its process looks like from outside."""
    with Child(2, LIMITS) as child:
        assert child.ready["op"] == "ready"
        pid = child.process.pid
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        limits = Path(f"/proc/{pid}/limits").read_text()
        assert re.search(r"Max address space\s+%d" % (LIMITS.memory_mib << 20), limits)
        assert re.search(r"Max core file size\s+0\s", limits)
        assert status["NoNewPrivs"].strip() == "1"
        assert sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))[:3] == [0, 1, 2]
        assert os.readlink(f"/proc/{pid}/fd/0") == "/dev/null"
        assert os.readlink(f"/proc/{pid}/cwd") == child.scratch
        if ROOT:
            assert status["Uid"].split()[:3] == [str(child.lease.uid)] * 3 and status["Groups"].strip() == ""
            assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
        workdir = child.workdir
    assert not os.path.exists(workdir)
    if ROOT:
        assert not processes_of_uid(child.lease.uid)


def leave_detached_sleeper(uid: int, close_first: tuple[int, ...] = ()) -> None:
    """Fork a process that becomes ``uid``, leaves our session and leaves a sleeper behind."""
    pid = os.fork()
    if pid == 0:
        for fd in close_first:
            os.close(fd)
        os.setsid()
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.fork() == 0:
            time.sleep(60)
        os._exit(0)
    os.waitpid(pid, 0)


@pytest.mark.skipif(not ROOT, reason="dedicated uids need root")
def test_uid_leases_are_exclusive_and_kill_everything_of_their_uid():
    first, second = UidLease(), UidLease()
    try:
        assert first.uid != second.uid
        leave_detached_sleeper(first.uid)  # a process of the leased uid that detaches itself
        deadline = time.monotonic() + 5
        while not processes_of_uid(first.uid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert processes_of_uid(first.uid)
        assert kill_uid(first.uid) and not processes_of_uid(first.uid)
    finally:
        assert first.release() and second.release()


@pytest.mark.skipif(not ROOT, reason="dedicated uids need root")
def test_a_uid_left_dirty_by_a_crashed_grader_is_cleaned_before_reuse():
    crashed = UidLease()
    # The leftover of a grader that died while its child ran (a real child never holds the
    # grader's lock files: they are not passed).
    locks = (crashed._fd, *crashed._legacy)
    leave_detached_sleeper(crashed.uid, close_first=locks)
    leftover = processes_of_uid(crashed.uid)
    for fd in locks:  # the grader "dies": its locks go, the lock file still says in use
        os.close(fd)
    held = []
    try:
        while not held or held[-1].uid != crashed.uid:
            assert len(held) < 100, "never got the crashed grader's uid back"
            held.append(UidLease())
        assert leftover and not processes_of_uid(crashed.uid)
    finally:
        for lease in held:
            lease.release()
        kill_uid(crashed.uid)


def test_a_policy_survives_its_json_form():
    policy = Policy(workdir="/tmp/x", keep_fds=(5, 6), uid=61001, gid=61001, hide=("/a",), read_only=("/c",))
    assert Policy.from_json(policy.to_json()) == policy


def test_the_plain_child_can_still_be_chosen_for_measuring_overhead(seed_exercise):
    report = grade(seed_exercise, seed_exercise.reference, limits=Limits(confine=False))
    assert report.status == "passed"
    assert report.environment["protections"]["confinement"]["active"] is False
    assert "user" not in report.environment["protections"]


NOT_ROOT_GRADER = """
import json, os, sys
from pathlib import Path
from grader import grade
from grader.exercise import find_exercise
from grader.sandbox.process import Limits, marked_processes
report = grade(find_exercise("named_sharding_replicated"), Path(sys.argv[1]), compile_cache=False,
               limits=Limits(call_s=3, total_s=30, startup_s=30, memory_mib=2048))
print(json.dumps({"euid": os.geteuid(), "status": report.status, "output": report.output["head"],
                  "protections": report.environment["protections"],
                  "left": marked_processes(f"{os.getpid()}-")}))
"""


@pytest.mark.skipif(not ROOT or not shutil.which("setpriv"), reason="needs root to start a grader as another user")
def test_without_root_the_report_says_what_is_not_protected(tmp_path):
    """The grader itself runs as nobody (keeping only the right to read every file, as this
    machine's Python lives under /root): no uid drop, a user namespace where allowed, and
    cleanup by process group and environment marker."""
    import json
    import subprocess
    import sys
    tmp_path.chmod(0o755)
    submission = tmp_path / "daemon.py"
    submission.write_text((HOSTILE / "background_processes.py").read_text().replace(
        'sleeper = subprocess.Popen(["sleep", "300"], start_new_session=True, env={},',
        'sleeper = subprocess.Popen(["sleep", "300"],'))  # keeps its marker: findable without root
    submission.chmod(0o644)
    env = {**os.environ, "JAXGRADE_CACHE": "off", "PYTHONPATH": str(REPO)}
    run = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search",
                          sys.executable, "-c", NOT_ROOT_GRADER, str(submission)],
                         capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    pids = [int(p) for p in re.findall(r"LEFT-BEHIND (\d+)", result["output"])]
    try:
        assert result["euid"] == 65534 and result["status"] == "failed"
        protections = result["protections"]
        assert protections["user"]["active"] is False and "can write whatever" in protections["user"]["detail"]
        assert "marker" in protections["cleanup"]["detail"]
        assert len(pids) == 2 and not result["left"]
        assert not [p for p in pids if _still_running(p)]
    finally:
        for pid in pids:
            if _still_running(pid):
                os.kill(pid, 9)
