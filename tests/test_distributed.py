"""grader.batch.distributed / ``jaxgrade grade --scheduler``: a class graded on a real Dask cluster
(a ``dask scheduler`` and two ``dask worker`` processes on loopback, started and stopped
here) gets the reports of local grading; a worker killed mid-batch loses nothing."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE
from grader.batch.run import Progress, grade_class, student_folder
from grader.errors import ClusterError, WorkerMismatch
from grader.batch.distributed import (DaskBackend, WorkerGrader, grade_task, pack_exercise,
                                report_data, report_from_data, unpack_exercise, versions, worker_status)
from grader.engine import grade

distributed = pytest.importorskip("distributed")  # installed by `make install` (the test extra)
pytestmark = pytest.mark.slow  # a real Dask cluster (scheduler and workers) per test, or its import

BIN = Path(sys.executable).parent
HOSTILE = REPO / "tests" / "hostile"
# Kills the process that started it (as root the child runs as another uid and cannot), and
# whatever else it can reach of the grader, while being imported.
KILLS_ITS_PARENTS = '''import os, signal
for pid in {os.getppid(), os.getpgid(os.getppid())}:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as error:
        print("could not kill the grader:", error.strerror)


def replicated_sharding_value(x):
    return x
'''
CLASS = {"alice": SEED_EXERCISE / "reference.py", "bob": SEED_EXERCISE / "wrong/value_mean.py",
         "carol": SEED_EXERCISE / "wrong/load_syntax_error.py", "dave": SEED_EXERCISE / "right/jitted.py",
         "erin": SEED_EXERCISE / "wrong/structure_all_devices.py",
         "frank": SEED_EXERCISE / "wrong/type_python_float.py", "gina": SEED_EXERCISE / "wrong/limits_crash.py", "hana": HOSTILE / "segfault.py", "ivan": KILLS_ITS_PARENTS}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _stop(process: subprocess.Popen, patience_s: float = 10.0) -> None:
    """The process and everything in its session (a worker's nanny and worker process)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=patience_s)
            break
        except subprocess.TimeoutExpired:
            continue
    try:  # the session may outlive its leader
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Cluster:
    def __init__(self, logs: Path) -> None:
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.logs = logs
        self.processes: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        self.client = None

    def _start(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "wb")
        process = subprocess.Popen([str(BIN / "dask"), *args], stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.processes.append(process)
        return process

    def start(self, workers: int) -> None:
        self._start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", self.address.rsplit(":", 1)[1],
                    "--no-dashboard")
        for i in range(workers):
            self.workers.append(self._start(f"worker{i}", "worker", self.address, "--host", "127.0.0.1",
                                            "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                                            "--name", f"w{i}"))
        self.client = distributed.Client(self.address, timeout=60, set_as_default=False)
        self.client.wait_for_workers(workers, timeout=120)

    def stop(self) -> None:
        if self.client is not None:
            self.client.close(timeout=10)
        for process in reversed(self.processes):
            _stop(process)

    def log_tail(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.logs.glob("*.log")))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = Cluster(tmp_path_factory.mktemp("dask-logs"))
    try:
        cluster.start(workers=2)
        yield cluster
    finally:
        cluster.stop()


def make_class(folder: Path, students: dict[str, Path | str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for student, origin in students.items():
        text = origin if isinstance(origin, str) else origin.read_text()
        (folder / f"{student}.py").write_text(text)
    return folder


def gradebook(out: Path) -> dict[str, dict[str, str]]:
    return {row["student"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


def _report(out: Path, student: str) -> dict:
    report = json.loads((out / "students" / student_folder(student) / "result.json").read_text())["report"]
    report.pop("duration_s")
    return report


def _readable(out: Path, student: str) -> str:
    """The instructor's markdown report with times masked (they differ from run to run)."""
    return re.sub(r"\d+(\.\d+)? ?(s|ms)\b", "T", (out / "students" / student_folder(student) / "report.md").read_text())


# -- without a cluster -----------------------------------------------------------------------------------
def test_an_exercise_travels_by_content_and_arrives_with_its_fingerprint(seed_exercise, tmp_path):
    package = pack_exercise(seed_exercise)
    assert "reference.py" in package["files"] and "checks.py" in package["files"]
    assert not any("__pycache__" in name for name in package["files"])
    arrived = unpack_exercise(package, tmp_path)
    assert arrived.fingerprint == seed_exercise.fingerprint and arrived.directory.parent == tmp_path
    assert [c.id for c in arrived.checks] == [c.id for c in seed_exercise.checks]
    assert unpack_exercise(package, tmp_path).directory == arrived.directory  # unpacked once

    changed = {**package, "files": {**package["files"], "reference.py": b"# changed on the way\n"}}
    with pytest.raises(ValueError, match="fingerprint"):
        unpack_exercise(changed, tmp_path / "other")
    escaping = {**package, "fingerprint": "0" * 16, "files": {"../escape.py": b"x = 1\n"}}
    with pytest.raises(ValueError, match="outside its folder"):
        unpack_exercise(escaping, tmp_path)
    assert not (tmp_path.parent / "escape.py").exists()
    worker = WorkerGrader(tmp_path / "worker")
    try:
        with pytest.raises(ValueError, match="a name, not a path"):
            worker.grade(package, 0, "../alice.py", b"x = 1\n", "alice.py")
    finally:
        worker.close()


def test_a_report_travels_whole(seed_exercise):
    report = grade(seed_exercise, SEED_EXERCISE / "wrong" / "value_mean.py")
    back = report_from_data(report_data(report))
    assert back == report and back.to_dict() == report.to_dict()
    assert any(c.hint for c in back.checks) and back.output == report.output


def test_a_worker_with_other_versions_refuses_to_grade(seed_exercise):
    other = {**versions(), "jaxgrade": "0.0.0-elsewhere"}
    with pytest.raises(WorkerMismatch, match="install the same versions"):
        grade_task(pack_exercise(seed_exercise), 0, other, "alice.py", b"x = 1\n", "alice.py")


def test_an_unreachable_scheduler_is_a_clear_error(seed_exercise, tmp_path):
    backend = DaskBackend(f"tcp://127.0.0.1:{_free_port()}", connect_timeout_s=2)
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler.*dask scheduler"):
        backend.start(seed_exercise, 0)
    backend.close()


def test_jobs_do_not_apply_to_a_cluster(tmp_path):
    folder = make_class(tmp_path / "class", {"alice": SEED_EXERCISE / "reference.py"})
    run = subprocess.run([str(BIN / "jaxgrade"), "grade", str(folder), "-e", SEED_EXERCISE.name, "-o",
                          str(tmp_path / "out"), "-j", "2", "--scheduler", "tcp://127.0.0.1:1"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "--nthreads" in run.stderr


# -- on a real cluster -------------------------------------------------------------------------------------------
def test_a_class_graded_on_the_cluster_gets_the_reports_of_local_grading(cluster, seed_exercise, tmp_path):
    folder = make_class(tmp_path / "class", CLASS)
    before = cluster.client.run(os.getpid)
    command = [str(BIN / "jaxgrade"), "grade", str(folder), "-e", SEED_EXERCISE.name, "-o", str(tmp_path / "out"),
               "--scheduler", cluster.address]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr + cluster.log_tail()
    assert f"[{len(CLASS)}/{len(CLASS)}]" in run.stderr  # progress, as in local grading
    assert f"{len(CLASS)} graded, 0 unchanged" in run.stdout

    local = grade_class(seed_exercise, folder, tmp_path / "local", jobs=2)
    assert sorted(local.graded) == sorted(CLASS)
    for student in CLASS:
        assert _report(tmp_path / "out", student) == _report(tmp_path / "local", student), student
        assert _readable(tmp_path / "out", student) == _readable(tmp_path / "local", student), student
    book = gradebook(tmp_path / "out")
    assert book["alice"]["status"] == "passed" and book["bob"]["status"] == "failed"
    assert book["gina"]["limits.resources"] == "0" and book["hana"]["status"] == "failed"
    assert {s: {k: v for k, v in row.items()} for s, row in book.items()} == gradebook(tmp_path / "local")

    # No submission took a worker down, and no worker process imported JAX (its zygote did).
    status = cluster.client.run(worker_status)
    assert {address: s["pid"] for address, s in status.items()} == before
    assert not any(s["jax_imported"] for s in status.values())
    assert all(s["zygotes"] and [tuple(p) for p in s["prepared"]] == [(seed_exercise.fingerprint, 0)]
               for s in status.values())

    again = subprocess.run(command, capture_output=True, text=True, timeout=120)  # resumes: nothing to grade
    assert again.returncode == 0 and f"0 graded, {len(CLASS)} unchanged" in again.stdout


# A solution that imports its own package: on a worker too it lies in its folders, and the
# tests/ package beside it, which nothing imports, stays behind.
PACKAGED = {
    "solution.py": "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec\n\n"
                   "from tools import mesh_of_first\n\n\ndef replicated_sharding_value(x):\n"
                   "    return jnp.sum(jax.device_put(x, NamedSharding(mesh_of_first(1), PartitionSpec())))\n",
    "tools/__init__.py": "from .meshes import mesh_of_first\n",
    "tools/meshes.py": "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n\n\ndef mesh_of_first(count):\n"
                       "    return Mesh(np.array(jax.devices()[:count]), ('data',))\n",
    "tests/__init__.py": "",
    "tests/test_solution.py": "raise SystemExit('never imported')\n",
}


def test_a_package_beside_a_solution_keeps_its_folders_on_the_workers(cluster, seed_exercise, tmp_path):
    for student in ("erin", "fay"):
        for relative, text in PACKAGED.items():
            (tmp_path / "class" / student / relative).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "class" / student / relative).write_text(text)
    (tmp_path / "class" / "fay" / "tools" / "meshes.py").write_text(PACKAGED["tools/meshes.py"].replace("[:count]", ""))
    run = subprocess.run([str(BIN / "jaxgrade"), "grade", str(tmp_path / "class"), "-e", SEED_EXERCISE.name, "-o",
                          str(tmp_path / "out"), "--scheduler", cluster.address], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr + cluster.log_tail()
    book = gradebook(tmp_path / "out")
    assert book["erin"]["score"] == "10", _report(tmp_path / "out", "erin")["checks"]
    # the helper module the worker got is the student's own: fay's mesh over every device is judged wrong
    assert book["fay"]["status"] == "failed" and book["fay"]["structure.mesh"] == "0", book["fay"]
    # a path that would leave the submission's folder is refused before anything is written
    worker = WorkerGrader(tmp_path / "worker")
    try:
        with pytest.raises(ValueError, match="a path inside the submission's folder"):
            worker.grade(pack_exercise(seed_exercise), 0, "solution.py", b"", "erin/solution.py",
                         (("tools/../../escape.py", b"x = 1\n"),))
    finally:
        worker.close()
    assert not (tmp_path / "escape.py").exists()


def _results(out: Path) -> set[str]:
    return {path.parent.name for path in (out / "students").glob("*/result.json")}


def test_an_interrupted_cluster_run_keeps_its_results_and_the_next_run_continues(cluster, tmp_path,
                                                                                 ctrl_c_reaches_children):
    students = {f"s{i:02d}": SEED_EXERCISE / ("reference.py" if i % 2 else "wrong/value_mean.py") for i in range(8)}
    folder = make_class(tmp_path / "class", students)
    out = tmp_path / "out"
    command = [str(BIN / "jaxgrade"), "grade", str(folder), "-e", SEED_EXERCISE.name, "-o", str(out),
               "--scheduler", cluster.address]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(_results(out)) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, errors = process.communicate(timeout=60)
    assert process.returncode == 130, errors.decode()[-2000:]
    kept = _results(out)
    assert 2 <= len(kept) < len(students) and set(gradebook(out)) == kept

    # What was in flight was taken off the cluster, and the next run grades only the rest.
    deadline = time.monotonic() + 30
    while any(cluster.client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(cluster.client.processing().values())
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"{len(students) - len(kept)} graded, {len(kept)} unchanged" in again.stdout
    assert set(gradebook(out)) == set(students)


class KillAfter(Progress):
    """Kills a busy worker (its nanny and process: a lost machine) when the first result arrives."""

    def __init__(self, cluster: Cluster, total: int) -> None:
        super().__init__(total, stream=io.StringIO(), interactive=False)
        self.cluster = cluster
        self.killed: dict | None = None

    def update(self, student: str, status: str, score: str) -> None:
        super().update(student, status, score)
        if self.killed is None:
            busy = {address: keys for address, keys in self.cluster.client.processing().items() if keys}
            assert busy, "no worker was grading when the first result came in"
            address = sorted(busy)[0]
            status = self.cluster.client.run(worker_status, workers=[address])[address]
            os.killpg(os.getpgid(status["pid"]), signal.SIGKILL)
            self.killed = {"address": address, "tasks": len(busy[address]), **status}


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_worker_killed_mid_batch_loses_nothing(cluster, seed_exercise, tmp_path):
    students = {f"s{i:02d}": SEED_EXERCISE / ("reference.py" if i % 2 else "wrong/value_mean.py") for i in range(10)}
    folder = make_class(tmp_path / "class", students)
    meter = KillAfter(cluster, len(students))
    outcome = grade_class(seed_exercise, folder, tmp_path / "out", progress=meter,
                          backend=DaskBackend(client=cluster.client))
    assert meter.killed is not None and meter.killed["tasks"] >= 1
    assert sorted(outcome.graded) == sorted(students) and not outcome.failed, outcome.failed
    book = gradebook(tmp_path / "out")
    assert sorted(book) == sorted(students)
    for student, origin in students.items():
        assert book[student]["status"] == ("passed" if origin.name == "reference.py" else "failed"), student
        assert book[student]["score"] == ("10" if origin.name == "reference.py" else "7"), student
    # The lost worker's submissions went to the other one, and the killed worker's warm
    # process (and with it every child) did not outlive it.
    alive = set(cluster.client.scheduler_info()["workers"])
    assert meter.killed["address"] not in alive and len(alive) == 1
    assert meter.killed["zygotes"] and all(_gone(pid, 15) for pid in meter.killed["zygotes"])
