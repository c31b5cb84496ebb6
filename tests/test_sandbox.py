"""grader.sandbox.process and grader.child.confine against the hostile corpus in tests/hostile/.

Every hostile submission is graded for real (real child processes, real JAX) with short
limits. Each test asserts the verdict and the message, that grading ended within its
limits plus slack (a functional bound, not a benchmark), that no file it attacked changed,
and that nothing it started is still running.
"""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import GRADER_ENVIRONMENT, REPO, SEED_EXERCISE
from grader import grade
from grader.child.confine import Policy
from grader.report.result import Report
from grader.sandbox.scratch import measure_tree, remove_tree
from grader.sandbox.limits import Limits
from grader.sandbox.pool import Pool
from grader.sandbox.process import ChildProcess, Launcher, child_environment
from grader.sandbox.reaper import MARKER, kill_uid, marked_processes, processes_of_uid
from grader.sandbox.settling import settle
from grader.sandbox.uids import UidLease

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


def named_processes(names: set[str]) -> list[int]:
    """Live processes (seen from the grader, whatever their PID namespace) whose comm is one of ``names``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if comm in names and _still_running(int(pid)):
            found.append(int(pid))
    return found


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

    def run(name: str, limits: Limits = LIMITS, launcher: Launcher | None = None, **fill: str) -> Graded:
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
        report = grade(seed_exercise, submission, limits=limits, launcher=launcher)
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
        left = named_processes(set(re.findall(r"LEFT-BEHIND (\w+)", result.output)))
        assert not left, f"processes the submission started still run: {left}"


def statuses(result: Graded) -> dict[str, str]:
    return {c.id: c.status for c in result.report.checks}


# -- time ---------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", ["infinite_loop.py", "ignores_signals.py", "slow_calls.py"])
def test_code_that_never_returns_is_stopped_at_the_time_limit(graded, name):
    result = graded(name)
    assert result.report.status == "failed"
    assert statuses(result)["load.function"] == "passed"
    limits = result.check("limits.resources")
    assert limits.status == "failed"
    assert "ran past its time limit" in limits.message and "did not finish within 2 s" in limits.message


@pytest.mark.slow
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
@pytest.mark.slow
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


@pytest.mark.slow
def test_the_next_submission_is_graded_normally_after_a_crash(graded, seed_exercise):
    assert graded("segfault.py", limits=SLOW_CRASH).report.status == "failed"
    assert grade(seed_exercise, seed_exercise.reference, limits=LIMITS).status == "passed"


# -- output -------------------------------------------------------------------------------------
@pytest.mark.slow
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


@pytest.mark.slow
def test_forged_results_on_stdout_change_nothing(graded):
    result = graded("fake_json_stdout.py")
    assert '"score": 10.0' in result.output  # shown to the student as their output ...
    assert result.report.status == "failed" and result.report.score < result.report.max_score  # ... never believed
    assert statuses(result)["structure.placed"] == "failed"


# -- secrets and network ------------------------------------------------------------------------
@pytest.mark.slow
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


@pytest.mark.slow
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
@pytest.mark.slow
def test_background_and_double_forked_processes_are_killed(graded):
    result = graded("background_processes.py")
    assert len(re.findall(r"LEFT-BEHIND (\w+)", result.output)) == 2, result.output
    assert statuses(result)["load.function"] == "passed"
    # the fixture asserts that both are gone


@pytest.mark.slow
def test_what_a_child_forked_warm_leaves_running_ends_with_it(graded):
    """Forked by the zygote (as root: into a PID namespace whose init the zygote spawned), what
    the submission leaves running is gone when its child ends, and so is that init: the zygote
    keeps no process for a child that ended."""
    with Pool() as pool:
        result = graded("background_processes.py", launcher=pool.launch)
        assert len(re.findall(r"LEFT-BEHIND (\w+)", result.output)) == 2, result.output
        assert statuses(result)["load.function"] == "passed"
        zygote = next(iter(pool._zygotes.values())).process.pid
        deadline = time.monotonic() + 5
        while (left := Path(f"/proc/{zygote}/task/{zygote}/children").read_text().split()) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not left, f"the zygote still has children: {left}"
    # the fixture asserts that what the submission started is gone


# -- what one student leaves behind never reaches the next (issue #24) -------------------------
IPC_KEY = 0x4A470024  # tests/hostile/leaves_ipc.py


def _system_v_keys() -> set[int]:
    """Keys of the System V objects the grader's own IPC namespace holds."""
    return _keys_of("shm") | _keys_of("sem") | _keys_of("msg")


@pytest.mark.slow
def test_shared_objects_and_processes_a_submission_leaves_never_reach_the_next(graded):
    canary = "CANARY-" + os.urandom(6).hex()
    first = graded("leaves_ipc.py", CANARY=canary)
    assert re.search(r"MADE shm=\d+ sem=\d+ msg=\d+/0 mq=\d+/0 memfd=\d+", first.output), first.output
    assert statuses(first)["load.function"] == "passed"
    if not first.protections["ipc"]["active"]:
        pytest.skip(f"no IPC namespace here: {first.protections['ipc']['detail']}")
    assert IPC_KEY not in _system_v_keys()  # made in the child's own namespace, and gone with it
    second = graded("looks_for_ipc.py")
    assert "LOOKED" in second.output and "FOUND" not in second.output and canary not in second.output, second.output
    # the fixture asserts that the process holding the memfd is gone


@pytest.mark.slow
def test_memory_that_no_process_limit_counts_stops_the_student_at_the_group_bound(graded, seed_exercise):
    limits = dataclasses.replace(LIMITS, scratch_mib=64, call_s=15, total_s=40)
    result = graded("memfd_hog.py", limits=limits, MIB="2880")
    if not result.protections["cgroup"]["active"]:
        pytest.skip(f"no control group here: {result.protections['cgroup']['detail']}")
    check = result.check("limits.resources")
    assert check.status == "failed", check.message
    assert f"used more than its {limits.memory_mib + limits.scratch_mib} MiB of memory" in check.message, check.message
    assert "HELD" not in result.output
    assert grade(seed_exercise, seed_exercise.reference, limits=LIMITS).status == "passed"


@pytest.mark.slow
def test_a_thread_that_never_ends_does_not_keep_the_child_alive(graded):
    result = graded("never_ending_thread.py")
    assert result.report.status == "passed", [(c.id, c.message) for c in result.report.checks]


# -- cheating -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_patching_jax_gains_nothing(graded):
    result = graded("patch_jax.py")
    assert statuses(result)["value.random_vectors"] == "passed"  # the sum is right ...
    placed = result.check("structure.placed")
    # ... but its patches are undone before each call is observed: x was never placed
    assert placed.status == "failed" and "No jax.device_put of x happened" in placed.message, placed.message
    assert result.report.status == "failed"


def test_patches_made_during_a_call_are_undone_before_the_next(graded):
    result = graded("patch_jax_in_call.py")
    # undone: its values would be off by one were its jnp.sum still in place at the next call; and
    # the patches forge nothing the witness re-derives, so a right answer keeps full marks
    assert result.report.status == "passed", [(c.id, c.message[:200]) for c in result.report.checks]


@pytest.mark.slow
def test_patching_the_grader_gains_nothing(graded):
    result = graded("patch_grader.py")
    placed = result.check("structure.placed")
    assert placed.status == "failed", placed.message
    assert "no jax.device_put of x happened" in placed.message.lower()


@pytest.mark.slow
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


@pytest.mark.slow
def test_garbage_on_the_channel_cannot_crash_the_grader(graded):
    result = graded("channel_forgery.py")
    limits = result.check("limits.resources")
    assert limits.status == "failed" and "broke the grading channel" in limits.message, limits.message
    assert result.report.status == "failed"


@pytest.mark.parametrize("name, says", [
    ("forges_internal_error.py", "RuntimeError: the grader crashed"),
    ("forges_ill_typed_reply.py", "malformed data"),
    ("forges_ill_typed_sharding.py", "interfered with grading"),
    ("forges_ill_typed_program.py", "interfered with grading"),
    ("exhausts_descriptors.py", "Too many open files"),
])
@pytest.mark.slow
def test_what_the_submissions_process_sends_or_breaks_fails_the_student_never_the_grader(graded, name, says):
    """A reply flagged as the grader's own error, an ill-typed one, or the grader's code in the
    process failing for want of descriptors: the submission's doing, so its failure (exit 1),
    never "not your fault" (exit 3, no score, ungradable)."""
    result = graded(name)
    assert result.report.status == "failed"
    assert not [c.id for c in result.report.checks if c.status == "error"]
    limits = result.check("limits.resources")
    assert limits.status == "failed" and "broke the grading channel" in limits.message, limits.message
    assert says in limits.message, limits.message
    assert "not your fault" not in json.dumps(result.report.to_dict())
    shown = subprocess.run([sys.executable, "-m", "grader", "check", str(result.folder / name), "-e",
                            "named_sharding_replicated", "--format", "json"], capture_output=True, text=True,
                           cwd=REPO, timeout=300)
    assert shown.returncode == 1, shown.stderr[-2000:]


# The grader's peak resident memory (VmHWM: its own process, not its children's), printed when
# `jaxgrade check` or `jaxgrade grade` ends.
PEAK_OF_CHECK = ("import atexit, re, sys\n"
                 "atexit.register(lambda: print('PEAK', re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1],"
                 " file=sys.stderr))\n"
                 "from grader.cli import main\nsys.exit(main())\n")


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["empty_lists", "short_strings", "under_budget"])
def test_a_flood_on_the_channel_costs_the_grader_bounded_memory_and_fails_the_student(tmp_path, shape):
    """A reply just under the channel's 64 MiB whose JSON is 22 million empty lists (1.7 GiB
    decoded), 13 million short strings (1.1 GiB), or as many objects as the channel takes for
    its size beside one 63 MiB string: `jaxgrade check` stays under 300 MiB, and the report
    says the submission interfered with grading (exit 1), never "not your fault" (exit 3)."""
    submission = tmp_path / "floods_channel.py"
    submission.write_text((HOSTILE / "floods_channel.py").read_text().replace("{SHAPE}", shape))
    shown = subprocess.run([sys.executable, "-c", PEAK_OF_CHECK, "check", str(submission), "-e",
                            "named_sharding_replicated", "--format", "json"], capture_output=True, text=True,
                           cwd=REPO, timeout=600)
    assert shown.returncode == 1, shown.stderr[-2000:]
    peak_mib = int(re.search(r"PEAK (\d+)", shown.stderr)[1]) / 1024
    assert peak_mib < 300, f"the grader peaked at {peak_mib:.0f} MiB"
    report = json.loads(shown.stdout)
    limits = next(c for c in report["checks"] if c["id"] == "limits.resources")
    assert limits["status"] == "failed" and "interfered with grading" in limits["message"], limits["message"]
    assert "not your fault" not in shown.stdout


@pytest.mark.slow
def test_floods_in_a_class_run_cost_the_grader_bounded_memory_and_the_class_is_graded(tmp_path):
    """Four children graded at once (-j 4), each flooding its channel on every call: one large
    message is read and decoded (at most 64 + 160 MiB) while the others wait unread in their
    pipes (grader.sandbox.process.LARGE_BODIES), and what the grader keeps of one is made before
    the next is read, so the grader process itself (VmHWM: its own memory, not its children's,
    which are other processes) stays under 300 MiB whatever -j is (237-239 MiB measured). Two
    decodings at once, or one beside the values another left decoded, passed it (318-331 MiB at
    -j 2); so did one body read beside another's decoding at -j 4 (305-326 MiB). The flooders
    fail, the others are graded."""
    folder = tmp_path / "class"
    folder.mkdir()
    source = (HOSTILE / "floods_channel.py").read_text()
    floods = {"ann": "under_budget", "bob": "under_budget", "cat": "under_budget", "dan": "empty_lists"}
    for student, shape in floods.items():  # graded first (in the order of their names), four at once
        (folder / f"{student}.py").write_text(source.replace("{SHAPE}", shape))
    shutil.copyfile(SEED_EXERCISE / "reference.py", folder / "eve.py")
    shutil.copyfile(SEED_EXERCISE / "wrong" / "value_mean.py", folder / "fay.py")
    out = tmp_path / "out"
    shown = subprocess.run([sys.executable, "-c", PEAK_OF_CHECK, "grade", str(folder), "-e", SEED_EXERCISE.name,
                            "-o", str(out), "-j", "4"], capture_output=True, text=True, cwd=REPO, timeout=600,
                           env={**os.environ, "NO_COLOR": "1"})
    assert shown.returncode == 0, shown.stdout[-2000:] + shown.stderr[-2000:]
    book = {row["student"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    assert {s: row["status"] for s, row in book.items()} == {**dict.fromkeys(floods, "failed"), "eve": "passed",
                                                             "fay": "failed"}, book
    for student in floods:
        report = json.loads((out / "students" / student / "report.json").read_text())
        limits = next(c for c in report["checks"] if c["id"] == "limits.resources")
        assert limits["status"] == "failed" and "interfered with grading" in limits["message"], limits["message"]
    peak_mib = int(re.search(r"PEAK (\d+)", shown.stderr)[1]) / 1024
    assert peak_mib < 300, f"the grader peaked at {peak_mib:.0f} MiB"


@pytest.mark.slow
def test_a_reply_too_large_for_the_channel_is_said_so_by_the_child_not_refused_as_a_flood(graded):
    result = graded("returns_too_much.py")
    kind = result.check("type.float32_scalar")
    assert kind.status == "failed" and "too large for the grader to read" in kind.message, kind.message
    assert "interfered" not in result.check("limits.resources").message


def _keyctl_works() -> bool:
    from grader.child.keyrings import KEY_SPEC_SESSION_KEYRING, KEYCTL_GET_KEYRING_ID, _keyctl
    try:
        return _keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) > 0
    except OSError:
        return False


@pytest.mark.skipif(not ROOT, reason="without root the child runs as the grader's own user: its user keyring is "
                                     "that user's, which the grader must not empty")
@pytest.mark.skipif(not _keyctl_works(), reason="this kernel or container refuses keyctl (no keyrings to test)")
def test_a_key_left_in_a_sandbox_uids_keyring_never_reaches_the_next_child(graded):
    """A submission adds a key to its uid's user keyring; the next child leased that uid finds
    nothing. Neither possesses the grader's session keyring."""
    from grader.child.keyrings import KEY_SPEC_SESSION_KEYRING, KEYCTL_GET_KEYRING_ID, _keyctl
    grader_session = _keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0)
    added = graded("keyring_leak.py", ROLE="add")
    assert re.search(r"ADDED -4 [1-9]\d*", added.output), added.output  # the key was really added
    settle()  # the first child's uid is swept in the background: free again, the next child gets it
    looked = graded("keyring_leak.py", ROLE="look")
    uids = [re.search(r"UID (\d+)", r.output)[1] for r in (added, looked)]
    if uids[0] != uids[1]:
        pytest.skip(f"the two children were leased different uids ({uids}): another grader holds the first")
    assert "ABSENT" in looked.output and "FOUND" not in looked.output, looked.output
    sessions = {int(re.search(r"SESSION (-?\d+)", r.output)[1]) for r in (added, looked)}
    assert grader_session not in sessions and len(sessions) == 2, (grader_session, sessions)
    assert looked.protections["keyrings"]["active"], looked.protections["keyrings"]


def _as_uid(uid: int, work) -> int:
    """Run ``work()`` in a forked process of ``uid``; its result as the exit status."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            code = work()
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.skipif(not ROOT, reason="needs root to act as a sandbox uid")
@pytest.mark.skipif(not _keyctl_works(), reason="this kernel or container refuses keyctl (no keyrings to test)")
def test_giving_a_uid_back_empties_its_keyrings():
    """What a child left in its uid's user keyring is gone once the grader gives the uid back,
    before any later child of the uid runs."""
    import ctypes
    from grader.child.keyrings import KEY_SPEC_USER_KEYRING, KEYCTL
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    add_key = {"x86_64": 248, "aarch64": 217}[os.uname().machine]

    def add() -> int:
        made = libc.syscall(ctypes.c_long(add_key), b"user", b"jaxgrade-leak", b"answers", ctypes.c_long(7),
                            ctypes.c_long(KEY_SPEC_USER_KEYRING))
        return 0 if made > 0 else 1

    def found() -> int:
        kind, name = ctypes.c_char_p(b"user"), ctypes.c_char_p(b"jaxgrade-leak")
        made = libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(10),  # KEYCTL_SEARCH
                            ctypes.c_long(KEY_SPEC_USER_KEYRING), kind, name, ctypes.c_long(0))
        return 1 if made > 0 else 0

    lease = UidLease()
    try:
        assert _as_uid(lease.uid, add) == 0
        assert _as_uid(lease.uid, found) == 1  # it is there while the uid is leased
    finally:
        assert lease.release()
    assert _as_uid(lease.uid, found) == 0


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
    for name in ("time", "environment", "output", "workdir", "cleanup", "limits", "user", "network", "descriptors",
                 "scratch", "hidden_paths", "processes"):
        assert name in protections and isinstance(protections[name]["active"], bool), name
    assert result.report.to_dict()["environment"]["protections"] == protections
    assert protections["user"]["active"] == ROOT


# -- the mechanisms, directly ------------------------------------------------------------------
def test_the_child_is_confined_before_the_submission_runs(tmp_path):
    """A child that is never given a submission: what its process looks like from outside."""
    with ChildProcess(2, LIMITS) as child:
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
        submission = _last_descendant(pid)  # in a PID namespace: the relay, its init, then the submission's
        if child.protections["ipc"]["active"]:
            assert submission != pid
            for kind in ("ipc", "pid"):
                assert os.readlink(f"/proc/{submission}/ns/{kind}") != os.readlink(f"/proc/self/ns/{kind}"), kind
        groups = child.group.paths if child.group else ()
        for folder in groups:
            assert str(submission) in Path(folder, "cgroup.procs").read_text().split(), folder
        workdir = child.workdir
    assert not os.path.exists(workdir)
    assert not [folder for folder in groups if os.path.exists(folder)]
    if ROOT:
        assert not processes_of_uid(child.lease.uid)


def _last_descendant(pid: int) -> int:
    while children := Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        pid = int(children[0])
    return pid


def test_a_child_that_cannot_start_leaves_nothing_behind(private_tmp):
    from grader.errors import PoolError

    def broken(*args: object) -> None:
        raise PoolError("the warm grading process has exited")
    before = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(PoolError):
        ChildProcess(2, LIMITS, launcher=broken)
    assert sorted(os.listdir("/proc/self/fd")) == before  # no pipe, and no uid lease (a lock file) held
    # and private_tmp checks that no folder is left


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
@pytest.mark.skipif(not ROOT, reason="needs root to act as a sandbox uid")
def test_a_uid_given_back_leaves_no_ipc_object_in_the_graders_namespace():
    """What a child without an IPC namespace (Docker's default capabilities) leaves in the
    machine's: the uid's System V segment, semaphore set and message queue are removed."""
    import ctypes
    lease = UidLease()
    key = 0x4A470000 + lease.uid
    made = os.fork()
    if made == 0:  # as the sandbox uid, in this (the grader's) IPC namespace
        ok = False
        try:
            os.setresgid(lease.uid, lease.uid, lease.uid)
            os.setresuid(lease.uid, lease.uid, lease.uid)
            libc = ctypes.CDLL(None)
            ok = libc.shmget(key, 4096, 0o1666) >= 0 and libc.semget(key, 1, 0o1666) >= 0 \
                and libc.msgget(key, 0o1666) >= 0
        finally:
            os._exit(0 if ok else 1)
    assert os.waitpid(made, 0)[1] == 0
    assert [kind for kind in ("shm", "sem", "msg") if key in _keys_of(kind)] == ["shm", "sem", "msg"]
    assert lease.release()
    assert not [kind for kind in ("shm", "sem", "msg") if key in _keys_of(kind)]


def _keys_of(kind: str) -> set[int]:
    return {int(row.split()[0]) for row in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]}


def test_processes_of_a_uid_are_found_by_any_of_their_uids_and_not_once_they_are_zombies():
    lease = UidLease()
    other = UidLease()
    try:
        pid = os.fork()
        if pid == 0:  # real and saved uid the leased one, effective uid another: still found
            try:
                os.setresuid(lease.uid, other.uid, lease.uid)
                time.sleep(60)
            finally:
                os._exit(0)
        deadline = time.monotonic() + 5
        while pid not in processes_of_uid(lease.uid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pid in processes_of_uid(lease.uid) and pid in processes_of_uid(other.uid)
        os.kill(pid, signal.SIGKILL)
        while pid in processes_of_uid(lease.uid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pid not in processes_of_uid(lease.uid)
        assert os.path.exists(f"/proc/{pid}")  # not reaped yet: a zombie, which nothing can kill again
        os.waitpid(pid, 0)
    finally:
        assert lease.release() and other.release()


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


@pytest.mark.skipif(not ROOT, reason="dedicated uids need root")
def test_a_uid_an_older_grader_holds_is_never_shared(tmp_path, monkeypatch):
    """Graders before leases were machine-wide kept them under their own temp dir: a uid one of
    them holds there is skipped."""
    import fcntl
    from grader.sandbox.uids import lease_directory
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    old_leases = tmp_path / "jaxgrade-uids"
    old_leases.mkdir(mode=0o700)
    first = UidLease()
    assert first.release()
    assert str(lease_directory()) in ("/run/jaxgrade", "/var/lib/jaxgrade")  # not under the temp dir
    with open(old_leases / f"{first.uid}.lock", "w") as held:  # what the older grader does
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        second = UidLease()
        try:
            assert second.uid != first.uid
        finally:
            assert second.release()


def test_a_policy_survives_its_json_form():
    policy = Policy(workdir="/tmp/x", limits=Limits().in_child(), keep_fds=(5, 6), uid=61001, gid=61001, hide=("/a",), read_only=("/c",))
    assert Policy.from_json(policy.to_json()) == policy


@pytest.mark.slow
def test_the_plain_child_can_still_be_chosen_for_measuring_overhead(seed_exercise):
    report = grade(seed_exercise, seed_exercise.reference, limits=Limits(confine=False))
    assert report.status == "passed"
    assert report.environment["protections"]["confinement"]["active"] is False
    assert "user" not in report.environment["protections"]


# A grader in a process of its own: grades each (file, limits) of the JSON list in argv[1] in
# turn, then prints one JSON line of what the tests look at.
GRADER = """
import json, os, sys, tempfile
from pathlib import Path
from grader import grade
from grader.authoring.exercise import find_exercise
from grader.sandbox.limits import Limits
from grader.sandbox.reaper import marked_processes
from grader.sandbox.uids import lease_directory
exercise, results = find_exercise("named_sharding_replicated"), []
for path, limits in json.loads(sys.argv[1]):
    report = grade(exercise, Path(path), compile_cache=False, limits=Limits(**limits))
    results.append({"status": report.status, "output": report.output["head"] + report.output["tail"],
                    "checks": {c.id: [c.status, c.message] for c in report.checks},
                    "protections": report.environment["protections"], "size": len(json.dumps(report.to_dict()))})
print(json.dumps({"euid": os.geteuid(), "tmp": tempfile.gettempdir(), "results": results,
                  "leases": str(lease_directory()) if os.geteuid() == 0 else None,
                  "left": marked_processes(f"{os.getpid()}-")}))
"""
GRADER_LIMITS = {"call_s": 3, "total_s": 30, "startup_s": 30, "memory_mib": 2048}
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",  # reads every file, as this
             "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]  # machine's Python is under /root


def grader_process(jobs: list[tuple[Path, dict]], env: dict[str, str] | None = None,
                   prefix: list[str] | None = None) -> subprocess.Popen:
    """Start a grader (``prefix``: the command it runs under) that grades ``jobs``."""
    return subprocess.Popen([*(prefix or []), sys.executable, "-c", GRADER,
                             json.dumps([[str(path), limits] for path, limits in jobs])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "JAXGRADE_CACHE": "off", "PYTHONPATH": str(REPO), **(env or {})})


def grader_results(process: subprocess.Popen, timeout: float = 240) -> dict:
    stdout, stderr = process.communicate(timeout=timeout)
    assert process.returncode == 0, stderr[-3000:]
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not ROOT or not shutil.which("setpriv"), reason="needs root to start a grader as another user")
def test_without_root_the_report_says_what_is_not_protected(tmp_path):
    """The grader itself runs as nobody (keeping only the right to read every file, as this
    machine's Python lives under /root): no uid drop, a user namespace where allowed, and
    cleanup by process group and environment marker."""
    tmp_path.chmod(0o755)
    submission = tmp_path / "daemon.py"
    submission.write_text((HOSTILE / "background_processes.py").read_text().replace(
        'start_new_session=True, env={},', 'start_new_session=True,'))  # keeps its marker: findable without root
    submission.chmod(0o644)
    run = grader_results(grader_process([(submission, GRADER_LIMITS)], prefix=AS_NOBODY))
    result = {**run["results"][0], "euid": run["euid"], "left": run["left"]}
    names = set(re.findall(r"LEFT-BEHIND (\w+)", result["output"]))
    try:
        assert result["euid"] == 65534 and result["status"] == "failed"
        protections = result["protections"]
        assert protections["user"]["active"] is False
        # the grader's own user: only Landlock, where the kernel has it, keeps the child from its files
        assert ("Landlock keeps it from writing" if protections["landlock"]["active"] else "can write whatever") \
            in protections["user"]["detail"]
        assert "marker" in protections["cleanup"]["detail"]
        # hidepid hides nothing from one's own user: only a PID namespace (in a user namespace) hides
        assert protections["processes"]["active"] is ("own PID namespace and /proc:" in protections["processes"]["detail"])
        assert protections["scratch"]["active"]
        if protections["network"]["active"]:  # user namespaces here: a private tmpfs, as for root
            assert "tmpfs" in protections["scratch"]["detail"]
        assert len(names) == 2 and not result["left"]
        assert not named_processes(names)
    finally:
        for pid in named_processes(names):
            os.kill(pid, 9)


# -- disk: the scratch space, the grader's own disk, cleanup ----------------------------------
SCRATCH_LIMITS = dataclasses.replace(LIMITS, scratch_mib=16)


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """The grader's temporary directory, for this test alone: what the sandbox leaves behind
    shows up there. The grader process's own Hypothesis folder, which lives as long as the
    process (whichever test first drew inputs made it), is made first, where it always is."""
    from grader.checks.values import _private_hypothesis_home
    _private_hypothesis_home()
    folder = tmp_path / "grader-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    assert not list(folder.iterdir()), f"left behind: {list(folder.iterdir())}"


def _bounded(report: Report) -> None:
    assert len(json.dumps(report.to_dict())) < 200_000


@pytest.mark.slow
def test_filling_the_scratch_space_stops_at_its_bound_and_the_class_goes_on(graded, seed_exercise, private_tmp):
    result = graded("fills_scratch.py", limits=SCRATCH_LIMITS, STOP_MIB="64")
    assert statuses(result)["load.function"] == "passed"
    limits = result.check("limits.resources")
    assert limits.status == "failed" and "ran past its disk space" in limits.message, limits.message
    assert "16 MiB" in limits.message and "Traceback" not in limits.message
    detail = result.protections["scratch"]["detail"]
    if "tmpfs" in detail:  # one bound for all: every place refused once the first was full
        wrote = [int(mib) for mib in re.findall(r"WROTE (\d+) MiB", result.output)]  # once per child
        assert wrote and max(wrote) <= 16 and result.output.count("REFUSED") == 4 * len(wrote), result.output
        assert "filled its 16 MiB of scratch space" in limits.message
    _bounded(result.report)
    assert grade(seed_exercise, seed_exercise.reference, limits=SCRATCH_LIMITS).status == "passed"


@pytest.mark.slow
def test_a_tree_5000_folders_deep_is_removed_and_harms_nothing(graded, seed_exercise, private_tmp, tmp_path):
    target = tmp_path / "graders_file.txt"
    target.write_text("KEEP")
    result = graded("deep_tree.py", limits=dataclasses.replace(LIMITS, call_s=10), LINK_TO=repr(str(target)))
    assert "BUILT 5000 levels" in result.output, result.output
    assert result.report.status == "passed", [(c.id, c.message) for c in result.report.checks]
    assert result.protections["workdir"]["active"], result.protections["workdir"]
    assert target.read_text() == "KEEP"
    _bounded(result.report)
    assert grade(seed_exercise, seed_exercise.reference, limits=LIMITS).status == "passed"


@pytest.fixture
def small_tmpfs(tmp_path):
    """Mount a tmpfs (root only) and unmount it afterwards; yields a function mounting one."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    mounted: list[Path] = []

    def mount(options: str) -> Path:
        target = tmp_path / f"tmpfs-{len(mounted)}"
        target.mkdir()
        if libc.mount(b"tmpfs", str(target).encode(), b"tmpfs", 0, options.encode()) != 0:
            pytest.skip(f"cannot mount a tmpfs here: {os.strerror(ctypes.get_errno())}")
        mounted.append(target)
        return target

    yield mount
    for target in mounted:
        libc.umount2(str(target).encode(), 2)


def _not_the_students_fault(report: Report) -> None:
    assert report.status == "error", [(c.id, c.status, c.message) for c in report.checks]
    assert all(c.status == "error" and "not your fault" in c.message for c in report.checks)
    assert report.score == 0


@pytest.mark.slow
@pytest.mark.skipif(not ROOT, reason="mounting a small file system needs root")
def test_a_full_disk_of_the_grader_is_never_the_students_fault(seed_exercise, small_tmpfs, monkeypatch):
    no_inodes = small_tmpfs("size=1m,nr_inodes=1")  # not even a folder can be made
    monkeypatch.setattr(tempfile, "tempdir", str(no_inodes))
    report = grade(seed_exercise, seed_exercise.reference, limits=LIMITS, compile_cache=False)
    _not_the_students_fault(report)
    assert "disk is full" in report.checks[0].message
    no_room = small_tmpfs("size=4k")  # folders can be made, the submission's copy cannot
    (no_room / "filler").write_bytes(b"x" * 4096)
    monkeypatch.setattr(tempfile, "tempdir", str(no_room))
    report = grade(seed_exercise, seed_exercise.reference, limits=LIMITS, compile_cache=False)
    _not_the_students_fault(report)
    assert "no room for the submission's copy" in report.checks[0].message
    assert [p.name for p in no_room.iterdir()] == ["filler"]
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert grade(seed_exercise, seed_exercise.reference, limits=LIMITS).status == "passed"


# -- what the child cannot see ------------------------------------------------------------------
def _outside_temporaries() -> Path:
    """A fresh folder that no private temporary directory covers (under /var/lib), so that only
    the sandbox's hiding keeps a child from it."""
    return Path(tempfile.mkdtemp(prefix="jaxgrade-test-", dir="/var/lib"))


def _git_directory() -> str:
    """The repository's own git directory (for a worktree, the main one that holds everything)."""
    try:
        found = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                               capture_output=True, text=True, timeout=30)
    except OSError:
        found = None
    return found.stdout.strip() if found and found.returncode == 0 else str(REPO / ".git")


def _attempts(output: str) -> dict[str, tuple[str, str]]:
    """{label: (READ or DENIED, what was read or the error)} from snoops_grader.py's lines."""
    found = {}
    for line in output.splitlines():
        verdict, _, rest = line.partition(" ")
        if verdict in ("READ", "DENIED"):
            label, _, data = rest.partition(" ")
            found[label] = (verdict, data)
    return found


@pytest.mark.slow
@pytest.mark.skipif(not os.access("/var/lib", os.W_OK), reason="needs a folder outside the temporary directories")
def test_a_class_run_hides_its_output_classmates_the_checkout_and_the_graders_processes(seed_exercise):
    from grader.batch.run import grade_class, student_folder
    base = _outside_temporaries()
    try:
        base.chmod(0o755)  # everything readable by anyone: only the hiding may keep the child out
        out, folder = base / "out", base / "class"
        out.mkdir(mode=0o755)
        folder.mkdir(mode=0o755)
        canary = f"CANARY-{os.getpid()}-{time.monotonic_ns()}"
        (out / f"{canary}.txt").write_text(canary)
        (folder / "alice.py").write_text(seed_exercise.reference.read_text() + f"# {canary}\n")
        source = (HOSTILE / "snoops_grader.py").read_text()
        for key, value in {"OUT": str(out), "CLASSMATE": str(folder / "alice.py"), "CHECKOUT": str(REPO),
                           "GIT_DIRECTORY": _git_directory(), "GRADER_PID": str(os.getpid())}.items():
            source = source.replace("{" + key + "}", repr(value))
        (folder / "snoops_grader.py").write_text(source)
        for path in [*out.iterdir(), *folder.iterdir()]:
            path.chmod(0o644)
        outcome = grade_class(seed_exercise, folder, out, jobs=1)
        assert sorted(outcome.graded) == ["alice", "snoops_grader"] and not outcome.failed
        reports = {s: json.loads((out / "students" / student_folder(s) / "report.json").read_text())
                   for s in outcome.graded}
        assert reports["alice"]["score"] == reports["alice"]["max_score"]
        snoop = reports["snoops_grader"]
        assert snoop["status"] == "passed", [(c["id"], c["message"]) for c in snoop["checks"]]
        output = (out / "students" / student_folder("snoops_grader") / "report.md").read_text()
        attempts = _attempts(output)
        assert "PROCESSES" in output, output
        assert attempts["control"][0] == "READ" and "root:" in attempts["control"][1]  # the attempts work
        assert canary not in output
        hidden = ("out", "gradebook", "classmate", "checkout/README.md", "checkout/pyproject.toml", "checkout/.git",
                  "checkout/exercises", "checkout/tests", "git-directory", "git-HEAD")
        for label in hidden:  # nothing: refused, or an empty folder
            verdict, data = attempts[label]
            assert verdict == "DENIED" or data == "[]", (label, verdict, data)
        if ROOT:  # another uid sees no process of the grader's in its own /proc
            assert attempts["grader-cmdline"][0] == "DENIED"
            assert "pytest" not in output.split("PROCESSES", 1)[1]
            assert snoop["environment"]["protections"]["processes"]["active"]
        assert len(json.dumps(snoop)) < 200_000
    finally:
        shutil.rmtree(base)
    assert not marked_processes(f"{os.getpid()}-")


# -- uid leases: one machine, many graders ------------------------------------------------------
SLOW_TO_LOAD = '''import os, time
print("UID", os.getuid(), flush=True)
time.sleep(4)  # both graders' children are alive at once
'''


@pytest.mark.slow
@pytest.mark.skipif(not ROOT, reason="dedicated uids need root")
def test_graders_with_different_temporary_directories_share_no_uid(seed_exercise, tmp_path):
    """Two graders at once, one with $TMPDIR under /tmp, the other under /var/tmp (whose private
    tmpfs once hid the working folder): each child gets its own uid, and each grades in full."""
    submission = tmp_path / "slow.py"
    submission.write_text(SLOW_TO_LOAD + seed_exercise.reference.read_text())
    limits = {**GRADER_LIMITS, "call_s": 10}
    temporaries = [tmp_path / "tmp-a", Path(tempfile.mkdtemp(prefix="jaxgrade-test-", dir="/var/tmp"))]
    try:
        temporaries[0].mkdir()
        graders = [grader_process([(submission, limits)], env={"TMPDIR": str(t)}) for t in temporaries]
        runs = [grader_results(g) for g in graders]
        assert [r["tmp"] for r in runs] == [str(t) for t in temporaries]
        for run in runs:
            result = run["results"][0]
            assert result["status"] == "passed", result["checks"]
            assert not run["left"]
        uids = [re.findall(r"UID (\d+)", r["results"][0]["output"]) for r in runs]
        assert all(len(u) == 1 for u in uids) and uids[0] != uids[1], uids
        assert runs[0]["leases"] == runs[1]["leases"] and not runs[0]["leases"].startswith(str(tmp_path))
        for folder in temporaries:
            assert not list(folder.iterdir()), f"left behind: {list(folder.iterdir())}"
    finally:
        shutil.rmtree(temporaries[1])


# -- no namespaces: the watched folder ----------------------------------------------------------
# Runs its arguments in a user namespace mapped one to one onto the host's ids (files keep their
# owners, root stays root) whose limit of nested user namespaces is 0: a process there can make
# no namespace at all, as on a host without unprivileged user namespaces, and the host's own
# setting is never touched.
WITHOUT_NAMESPACES = """
import ctypes, os, sys
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
pid = os.fork()
if pid == 0:
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:  # CLONE_NEWUSER
        os._exit(90)
    os.write(ready_w, b"u")
    os.read(go_r, 1)
    with open("/proc/sys/user/max_user_namespaces", "w") as handle:
        handle.write("0")
    os.execvp(sys.argv[1], sys.argv[1:])
os.read(ready_r, 1)
for name in ("uid_map", "gid_map"):
    with open(f"/proc/{pid}/{name}", "w") as handle:
        handle.write("0 0 4294967295")
os.write(go_w, b"g")
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.slow
@pytest.mark.skipif(not ROOT or not shutil.which("setpriv"), reason="needs root to set up a grader without namespaces")
def test_without_namespaces_the_folder_is_watched_and_cleaned(seed_exercise, tmp_path):
    """A grader that can make no namespace (not root, no user namespaces): the child works on
    the grader's disk, which the grader measures; past the bound it stops the child. A 5,000
    deep tree left there is removed all the same, and the class goes on."""
    tmp_path.chmod(0o755)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    temporary.chmod(0o777)
    target = tmp_path / "graders_file.txt"
    target.write_text("KEEP")
    files = {"fills.py": (HOSTILE / "fills_scratch.py").read_text().replace("{STOP_MIB}", "64"),
             "deep.py": (HOSTILE / "deep_tree.py").read_text().replace("{LINK_TO}", repr(str(target))),
             "alice.py": seed_exercise.reference.read_text()}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o644)
    # 5,000 folders take a while on a busy disk, and 20 MiB of it (a block each): more than 16 MiB
    limits = {"fills.py": {**GRADER_LIMITS, "scratch_mib": 16}, "deep.py": {**GRADER_LIMITS, "call_s": 15},
              "alice.py": GRADER_LIMITS}
    run = grader_results(grader_process([(tmp_path / name, limits[name]) for name in files],
                                        env={"TMPDIR": str(temporary)},
                                        prefix=[sys.executable, "-c", WITHOUT_NAMESPACES, *AS_NOBODY]))
    fills, deep, alice = run["results"]
    assert run["euid"] == 65534 and not run["left"]
    assert fills["protections"]["network"]["active"] is False  # no namespace at all
    assert "measured while it runs" in fills["protections"]["scratch"]["detail"]
    status, message = fills["checks"]["limits.resources"]
    assert status == "failed" and "wrote more than 16 MiB" in message and "stopped it" in message, message
    assert "REFUSED" not in fills["output"]  # the disk never refused: the grader stopped it, mid-way or after
    assert deep["status"] == "passed", {k: v for k, v in deep["checks"].items() if v[0] != "passed"}
    assert "BUILT 5000 levels" in deep["output"] and deep["protections"]["workdir"]["active"]
    assert alice["status"] == "passed", alice["checks"]
    assert all(r["size"] < 200_000 for r in run["results"])
    assert target.read_text() == "KEEP"
    assert not list(temporary.iterdir()), f"left behind: {list(temporary.iterdir())}"


# -- cleanup, directly --------------------------------------------------------------------------
def build_hostile_tree(top: Path, depth: int, outside: Path, locked: int = 0o500) -> None:
    """A tree ``depth`` folders deep under ``top`` (deeper than a path can name) holding, every
    500 levels, links to ``outside`` (a file and a folder), a file named with bytes that are not
    UTF-8 and made unwritable, and a FIFO; every 1000th folder gets mode ``locked`` last."""
    top.mkdir()
    folder = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    modes = []
    for level in range(depth):
        os.mkdir("d", dir_fd=folder)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        if level % 500 == 0:
            os.symlink(outside / "file.txt", "link-file", dir_fd=folder)
            os.symlink(outside, "link-folder", dir_fd=folder)
            os.mkfifo("fifo", dir_fd=folder)
            name = os.open(b"\xff\xfe\n-not-utf8", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=folder)
            os.write(name, b"data")
            os.fchmod(name, 0)
            os.close(name)
        if level % 1000 == 999:
            modes.append(folder)
        else:
            os.close(folder)
        folder = inner
    os.close(folder)
    for held in modes:  # last, or nothing could have been made inside
        os.fchmod(held, locked)
        os.close(held)


@pytest.fixture
def outside(tmp_path) -> Path:
    """What links in a tree point to: must survive the tree's removal."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "file.txt").write_text("KEEP")
    return folder


@pytest.mark.slow
def test_any_tree_is_removed_and_nothing_it_links_to(tmp_path, outside):
    top = tmp_path / "workdir"
    build_hostile_tree(top, 5000, outside)
    assert measure_tree(str(top), 1 << 40, 1 << 30).entries == 5000 + 10 * 4  # every entry, links not followed
    assert remove_tree(str(top)) == []
    assert not top.exists()
    assert (outside / "file.txt").read_text() == "KEEP" and [p.name for p in outside.iterdir()] == ["file.txt"]
    assert remove_tree(str(top)) == []  # already gone: nothing to say


OWNER_REMOVES = """
import ctypes, json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from test_sandbox import build_hostile_tree
from grader.sandbox.scratch import measure_tree, remove_tree
# Python is imported: give up the right to read every file, and be a plain owner.
ctypes.CDLL(None).capset((ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)())
top = Path(sys.argv[1])
build_hostile_tree(top, 2000, Path(sys.argv[2]), locked=0)
print(json.dumps({"measured": measure_tree(str(top), 1 << 40, 1 << 30).unmeasured,
                  "leaks": remove_tree(str(top)), "exists": top.exists()}))
"""


@pytest.mark.skipif(not ROOT or not shutil.which("setpriv"), reason="needs root to act as another user")
def test_the_owner_takes_back_the_rights_a_submission_removed(tmp_path, outside):
    """Without root, folders whose owner removed every right (mode 0) can be neither read nor
    emptied as they are: the grader, their owner, gives itself the rights back first."""
    base = Path(tempfile.mkdtemp(prefix="jaxgrade-test-", dir="/tmp"))  # reachable without any right
    try:
        base.chmod(0o777)
        run = subprocess.run([*AS_NOBODY, sys.executable, "-c", OWNER_REMOVES, str(base / "workdir"), str(outside),
                              str(Path(__file__).parent)], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
        assert run.returncode == 0, run.stderr[-3000:]
        assert not list(base.iterdir())
    finally:
        shutil.rmtree(base)
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert "could not be read" in result["measured"]  # the watch cannot see into them: it says so
    assert result == {**result, "leaks": [], "exists": False}
    assert (outside / "file.txt").read_text() == "KEEP"


@pytest.mark.skipif(not ROOT, reason="mounting needs root")
def test_what_cannot_be_removed_is_said_loudly_and_never_crossed(tmp_path, outside, caplog):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    with ChildProcess(2, LIMITS) as child:
        child.ready
        mounted = Path(child.workdir) / "mounted"
        mounted.mkdir()
        assert libc.mount(str(outside).encode(), str(mounted).encode(), None, 4096, None) == 0  # MS_BIND
    try:
        assert (outside / "file.txt").read_text() == "KEEP"  # another file system: never entered
        assert not child.protections["workdir"]["active"]
        assert "mounted" in child.protections["workdir"]["detail"]
        assert any(r.levelname == "ERROR" and child.workdir in r.getMessage() for r in caplog.records)
    finally:
        libc.umount2(str(mounted).encode(), 2)
        shutil.rmtree(child.workdir)
