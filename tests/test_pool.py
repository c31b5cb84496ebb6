"""grader.sandbox.pool: children forked from a warm zygote behave as exec'd children do: the same
verdicts, output captured, only the allowlisted environment, no stray descriptors, a new
process group, and nothing left running once the pool closes."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import SEED_EXERCISE
from grader.engine import compile_cache_directory, grade
from grader.errors import PoolError, ZygoteGone
from grader.sandbox.pool import Pool
from grader.sandbox.process import child_environment

HOSTILE = Path(__file__).resolve().parent / "hostile"
VARIANTS = [SEED_EXERCISE / "reference.py", SEED_EXERCISE / "right" / "jitted.py",
            SEED_EXERCISE / "wrong" / "value_mean.py", SEED_EXERCISE / "wrong" / "structure_all_devices.py",
            SEED_EXERCISE / "wrong" / "load_syntax_error.py", SEED_EXERCISE / "wrong" / "limits_crash.py",
            SEED_EXERCISE / "wrong" / "type_python_float.py"]

SNOOP = '''
import gc, json, os, sys
import jax
import jax.numpy as jnp

print("SNOOP " + json.dumps({"env": sorted(os.environ), "fds": sorted(int(f) for f in os.listdir("/proc/self/fd")),
                             "group": {os.getpid(): "own", 0: "led from outside its PID namespace",
                                           1: "led by its PID namespace's init"}.get(os.getpgid(0), "shared"),
                             "devices": jax.device_count(),
                             "cwd": os.getcwd(), "home": os.environ.get("HOME"), "frozen": gc.get_freeze_count()}))
print("to stderr", file=sys.stderr)


def replicated_sharding_value(x):
    return jnp.sum(x)
'''


@pytest.fixture(scope="module")
def pool():
    with Pool() as warm:
        yield warm


def statuses(report) -> list[tuple[str, str, float]]:
    return [(c.id, c.status, c.score) for c in report.checks]


@pytest.mark.slow
@pytest.mark.parametrize("path", VARIANTS, ids=lambda p: p.stem)
def test_forked_children_give_the_verdicts_of_exec_children(seed_exercise, pool, path):
    forked = grade(seed_exercise, path, launcher=pool.launch)
    fresh = grade(seed_exercise, path)
    assert statuses(forked) == statuses(fresh)
    assert [c.message for c in forked.checks] == [c.message for c in fresh.checks]


# Submissions that patch what the child's Child holds on to (JAX, NumPy, builtins, the recorder's
# hooks, the grader's modules), or reach the recorder through gc: a forked child takes those
# from the zygote, an exec'd child takes its own, and both must undo the same patches.
PATCHING = ["patch_jax.py", "patch_jax_in_call.py", "patch_grader.py", "remove_observers_in_call.py",
            "remove_observers_put_back.py", "swap_builtins_in_call.py", "honest_swaps_builtin_in_call.py",
            "rewrite_sharding_mesh.py", "honest_clears_caches_in_call.py", "forge_recorded_events.py",
            "honest_gc_collect.py"]


@pytest.mark.slow
@pytest.mark.parametrize("name", PATCHING)
def test_forked_children_undo_a_submissions_patches_as_exec_children_do(seed_exercise, pool, tmp_path, name):
    path = tmp_path / name
    path.write_bytes((HOSTILE / name).read_bytes())
    forked = grade(seed_exercise, path, launcher=pool.launch)
    fresh = grade(seed_exercise, path)
    assert statuses(forked) == statuses(fresh)


def _snoop(report) -> dict:
    import json
    line = next(l for l in report.output["head"].splitlines() if l.startswith("SNOOP "))
    return json.loads(line[len("SNOOP "):])


@pytest.mark.slow
def test_a_forked_child_has_only_its_own_environment_descriptors_and_output(seed_exercise, pool, tmp_path,
                                                                           monkeypatch):
    monkeypatch.setenv("JAXGRADE_TEST_SECRET", "do-not-leak")  # the grader's own variable
    path = tmp_path / "snoop.py"
    path.write_text(SNOOP)
    forked, fresh = grade(seed_exercise, path, launcher=pool.launch), grade(seed_exercise, path)
    seen, expected = _snoop(forked), _snoop(fresh)
    assert "JAXGRADE_TEST_SECRET" not in seen["env"]
    assert seen["env"] == expected["env"]
    assert seen["devices"] == expected["devices"] == seed_exercise.devices
    assert len(seen["fds"]) == len(expected["fds"])  # stdio, the channel, listdir's own
    # its own process group; in a PID namespace, the group of the process the grader started: the
    # relay outside it (an exec'd child), or its init (a child the zygote forked into a namespace)
    assert "shared" not in (seen["group"], expected["group"])
    assert seen["group"] == expected["group"] or os.geteuid() == 0
    assert seen["cwd"] == seen["home"] and seen["cwd"] != expected["cwd"]  # each child its own fresh folder
    assert "to stderr" in forked.output["head"]
    assert seen["frozen"] > 0 and expected["frozen"] == 0  # what the zygote imported, out of the collector's walk


@pytest.mark.slow
def test_a_warmed_zygote_is_the_one_the_exercise_children_fork_from(seed_exercise):
    with Pool() as pool:
        pool.warm(seed_exercise.devices, compile_cache_directory())
        (warmed,) = pool._zygotes.values()
        report = grade(seed_exercise, SEED_EXERCISE / "reference.py", launcher=pool.launch)
        assert report.status == "passed"
        assert list(pool._zygotes.values()) == [warmed]


@pytest.mark.slow
def test_a_process_forked_from_the_grader_forks_its_children_through_a_channel_of_its_own(seed_exercise, tmp_path):
    """A class run's grading processes (grader.batch.processes) share the grader's zygote: each
    forks through its own channel and hears its own children's exits. When such a process dies,
    the children it asked for end with it (they see their grader go; the zygote kills them too),
    and the zygote serves the grader on."""
    hang = tmp_path / "hang.py"
    hang.write_text("import time\n\ndef replicated_sharding_value(x):\n    time.sleep(3600)\n")
    env = child_environment(seed_exercise.devices, "", "", None)
    with Pool() as pool:
        channels = [pool.attach(env), pool.attach(env)]
        (zygote,) = pool._zygotes.values()
        reading, writing = os.pipe()
        graded = os.fork()
        if graded == 0:  # a grading process: grades the reference through the first channel
            code = 1
            try:
                own = Pool()
                own.adopt(env, channels[0])
                report = grade(seed_exercise, SEED_EXERCISE / "reference.py", compile_cache=False, launcher=own.launch)
                started = [z.process for z in own._zygotes.values()]  # None: it started no zygote of its own
                os.write(writing, f"{report.status} {started}".encode())
                code = 0
            finally:
                os._exit(code)
        hanging = os.fork()
        if hanging == 0:  # another: its child hangs, then the process is killed
            own = Pool()
            own.adopt(env, channels[1])
            threading.Thread(target=grade, args=(seed_exercise, hang), daemon=True,
                             kwargs={"compile_cache": False, "launcher": own.launch}).start()
            time.sleep(3600)
        for channel in channels:
            channel.close()
        os.close(writing)
        assert os.read(reading, 200).decode() == "passed [None]"
        assert os.waitstatus_to_exitcode(os.waitpid(graded, 0)[1]) == 0
        deadline = time.monotonic() + 60
        while not (children := _children(zygote.process.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)  # the hanging child started
        assert children
        os.kill(hanging, signal.SIGKILL)
        os.waitpid(hanging, 0)
        while _children(zygote.process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _children(zygote.process.pid)  # killed with the process that asked for it
        assert grade(seed_exercise, SEED_EXERCISE / "reference.py", compile_cache=False,
                     launcher=pool.launch).status == "passed"
        assert list(pool._zygotes.values()) == [zygote]


def _children(pid: int) -> list[str]:
    """The processes ``pid`` forked that still run (a namespace's init, root's zygote spawns, counted too)."""
    return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()


def test_closing_a_pool_whose_zygote_is_still_starting_leaves_nothing_running(seed_exercise):
    pool = Pool()
    pool.warm(seed_exercise.devices, None)
    (zygote,) = pool._zygotes.values()
    pool.close()
    assert zygote.process.poll() is not None
    assert not Path(zygote.home).exists()


@pytest.mark.slow
def test_a_dead_zygote_is_replaced(seed_exercise):
    with Pool() as pool:
        grade(seed_exercise, SEED_EXERCISE / "wrong" / "load_wrong_name.py", launcher=pool.launch)
        (zygote,) = pool._zygotes.values()
        os.kill(zygote.process.pid, signal.SIGKILL)
        zygote.process.wait()
        report = grade(seed_exercise, SEED_EXERCISE / "reference.py", launcher=pool.launch)
        assert report.status == "passed"
        assert list(pool._zygotes.values()) != [zygote]


def test_a_zygote_that_died_unnoticed_says_it_forked_nothing(seed_exercise, tmp_path):
    with Pool() as pool:
        pool.warm(seed_exercise.devices, None)
        (zygote,) = pool._zygotes.values()
        zygote._await_ready()
        os.kill(zygote.process.pid, signal.SIGKILL)
        zygote.process.wait()
        zygote._reader.join()
        zygote.alive = True  # as in the moment after it died and before its reader woke
        with pytest.raises(ZygoteGone, match="cannot reach the warm grading process"):
            zygote.fork([sys.executable, "-I", "-c", "pass"], {}, str(tmp_path), (0, 1, 2))
        assert not zygote.alive


@pytest.mark.slow
def test_closing_the_pool_ends_the_running_children_and_refuses_new_ones(seed_exercise, tmp_path):
    hang = tmp_path / "hang.py"
    hang.write_text("import time\n\ndef replicated_sharding_value(x):\n    time.sleep(3600)\n")
    pool = Pool()
    started = threading.Event()
    launched = []

    def launch(*args):
        process = pool.launch(*args)
        launched.append(process)
        started.set()
        return process

    errors: list[BaseException] = []
    worker = threading.Thread(target=lambda: _grade_quietly(seed_exercise, hang, launch, errors))
    worker.start()
    assert started.wait(60)
    (zygote,) = pool._zygotes.values()
    pool.close()
    worker.join(60)
    assert not worker.is_alive()
    assert zygote.process.poll() is not None
    assert all(p.poll() is not None for p in launched)
    with pytest.raises(PoolError, match="closed"):
        pool.launch(["python", "-I", "-c", "pass"], {}, str(tmp_path), (0, 1, 2))


def _grade_quietly(exercise, path: Path, launch, errors: list[BaseException]) -> None:
    try:
        grade(exercise, path, launcher=launch)
    except BaseException as error:  # the pool closed under it: expected
        errors.append(error)


@pytest.mark.slow
def test_forked_children_are_confined_as_exec_children_are(seed_exercise, pool):
    """The same protections, word for word: the scratch tmpfs and its bound, the hidden paths
    (the checkout, the exercises), the private /proc, the limits, the uid."""
    forked = grade(seed_exercise, SEED_EXERCISE / "reference.py", launcher=pool.launch)
    fresh = grade(seed_exercise, SEED_EXERCISE / "reference.py")
    assert forked.status == fresh.status == "passed"
    assert forked.environment["protections"] == fresh.environment["protections"]
    assert forked.environment["protections"]["scratch"]["active"]


def test_a_child_that_ends_at_once_is_still_handed_to_the_thread_that_asked_for_it(tmp_path):
    """The zygote reports the fork and, a moment later, the exit; the asking thread may wake only
    after both (two threads at once, as ``grade -j 2`` asks, make that likely)."""
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    ended: list[int | str] = []

    def launch_many(warm: Pool) -> None:
        for _ in range(150):
            pipes = [os.pipe() for _ in range(3)]
            try:
                child = warm.launch([sys.executable, "-I", "-c", "import os; os._exit(3)"], env, str(tmp_path),
                                    (pipes[0][0], pipes[1][1], pipes[2][1]))
                ended.append(child.wait(30))
            except Exception as error:
                ended.append(f"{type(error).__name__}: {error}")
            finally:
                for fd in (fd for pipe in pipes for fd in pipe):
                    os.close(fd)

    with Pool() as warm:
        threads = [threading.Thread(target=launch_many, args=(warm,)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert ended == [3] * 300


# Run in a process of its own, whose low descriptor numbers are free: the channel is given the
# very numbers the pipe that keeps its PID namespace's init alive gets in the zygote (the two it
# allocates after the three it receives).
CHOSEN_NUMBERS = r'''
import fcntl, json, os, sys, tempfile
from grader.sandbox.pool import Zygote

def high_pipe():  # out of the low numbers' way
    ends = os.pipe()
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in ends]
    for fd in ends:
        os.close(fd)
    return moved

def free_in(pid, count):
    used = {int(name) for name in os.listdir(f"/proc/{pid}/fd")}
    free = [n for n in range(3, 1000) if n not in used]
    return free[:count]

home = tempfile.mkdtemp()
env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "TMPDIR": home, "JAX_PLATFORMS": "cpu"}
zygote = Zygote(env)
plain = [high_pipe() for _ in range(3)]
zygote.fork([sys.executable, "-I", "-c", "import os; os._exit(0)"], env, home,
            (plain[0][0], plain[1][1], plain[2][1])).wait(30)
inbox, outbox = free_in(zygote.process.pid, 5)[3:]
assert all(n not in {int(f) for f in os.listdir("/proc/self/fd")} for n in (inbox, outbox))
to_child, from_child, output = high_pipe(), high_pipe(), high_pipe()
os.dup2(to_child[0], inbox, inheritable=False)
os.dup2(from_child[1], outbox, inheritable=False)
os.close(to_child[0])
os.close(from_child[1])
code = """
import os, sys
assert os.environ.pop("JAXGRADE_ZYGOTE_NAMESPACE") == "1"
os.write(int(sys.argv[2]), os.read(int(sys.argv[1]), 100) + b" " + str(os.getpid()).encode())
sys.exit(5)
"""
child = zygote.fork([sys.executable, "-I", "-c", code, str(inbox), str(outbox), json.dumps({"uid": 65000})],
                    env, home, (inbox, outbox, output[1]))
for fd in (inbox, outbox, output[1]):
    os.close(fd)
os.write(to_child[1], b"hi")
os.close(to_child[1])
reply = b""
while chunk := os.read(from_child[0], 100):
    reply += chunk
code = child.wait(30)
out = os.read(output[0], 1000)
zygote.close()
print(json.dumps({"reply": reply.decode(errors="replace"), "code": code, "output": out.decode(errors="replace")}))
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's zygote makes PID namespaces")
def test_a_child_forked_into_its_own_pid_namespace_keeps_its_channel_whatever_its_numbers(tmp_path):
    """A child confined to its own uid is forked into a PID namespace of its own as its pid 2
    (after the init the zygote spawned there): its channel has the numbers the grader chose even
    when the pipe that keeps init alive had them in the zygote, and the zygote reports the
    child's own end (exit 5)."""
    import json
    import subprocess
    done = subprocess.run([sys.executable, "-c", CHOSEN_NUMBERS], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"reply": "hi 2", "code": 5, "output": ""}
