"""Grade a class on an existing Dask cluster: ``jaxgrade grade ... --scheduler tcp://HOST:PORT``.

jaxgrade grows no scheduler of its own: course teams already run dask.distributed (plain VMs,
Kubernetes, HPC queues; see docs/cluster.md). :class:`DaskBackend` is a
:class:`grader.batch.run.Backend`, so intake, resuming, progress, the per-student files, the
gradebook and the summary are exactly those of local grading: only where a submission is
graded changes.

What travels, by content (workers need no shared file system and no copy of the course):

- the exercise: every file of its folder with its fingerprint, once per batch, as a task
  whose result each worker fetches once. A worker writes the files into its own scratch
  folder, checks that they give the same fingerprint, and keeps the loaded exercise (and its
  drawn Hypothesis inputs) for the following submissions;
- each submission: its file name (the module name and the name in messages come from it),
  its bytes and where it came from, as the instructor knows it, and its helper modules, each
  with its path relative to the graded file's folder (``grader.source.helper_at``), so that a
  package arrives in its folders, as in local grading;
- back: the whole :class:`grader.report.result.Report` as JSON text (plain data, every field the
  renderers need). The machine that asked writes every file.

On each worker process one warm :class:`grader.sandbox.pool.Pool` is created the first time it
grades (the same machinery as local grading: a zygote that imported JAX once forks a fresh
sandboxed child per submission). The worker process itself never imports JAX, exactly like
the local grading process: forking from a process whose XLA backend started deadlocks, and a
Dask worker is heavily threaded. When the worker process ends, the zygote sees its channel
close and takes every child with it.

Faults: a worker that dies (killed, out of memory, machine lost) loses nothing: the scheduler
runs its unfinished submissions on another worker (``distributed.scheduler.allowed-failures``
deaths per task, 3 by default), and results reach disk only on this machine, as each
arrives. A submission cannot take a worker down: it runs in its sandboxed child, and
``grader.engine.grade`` turns whatever it does into a report. Only the grader's own failures
(its warm process could not fork) raise; Dask retries those ``RETRIES`` times, then the
submission is reported as failed in the grader and the next run grades it again.
"""
from __future__ import annotations

import atexit
import dataclasses
import fcntl
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Iterator

from grader import __version__
from grader.errors import ClusterError, WorkerMismatch
from grader.authoring.exercise import Exercise, load_exercise
from grader.batch.results import Graded, render_student
from grader.report.result import CheckResult, Report
from grader.source import helper_at, helper_path

if TYPE_CHECKING:
    from distributed import Client
    from grader.batch.run import Worker
    from grader.batch.submissions import Submission
    from grader.sandbox.pool import Pool

RETRIES = 2             # for the grader's own failures on a worker; a worker's death is the scheduler's
CONNECT_TIMEOUT_S = 30  # to reach the scheduler
WORKERS_TIMEOUT_S = 60  # for a cluster with no worker yet to get one
SLOTS_PER_THREAD = 2    # submissions in flight per worker thread: every thread stays busy, little is queued




# -- what travels ----------------------------------------------------------------------------------
def exercise_files(exercise: Exercise) -> dict[str, bytes]:
    """The exercise folder's files by relative POSIX path, its checks' helpers carried in: the
    files its fingerprint covers."""
    return {name: path.read_bytes() for name, path in exercise.files()}


def pack_exercise(exercise: Exercise) -> dict[str, Any]:
    return {"slug": exercise.slug, "fingerprint": exercise.fingerprint, "files": exercise_files(exercise)}


def unpack_exercise(package: dict[str, Any], root: Path) -> Exercise:
    """Write a packed exercise under ``root`` (once: a folder named by its fingerprint) and load
    it; a transfer that does not reproduce the fingerprint is refused."""
    slug, fingerprint = str(package["slug"]), str(package["fingerprint"])
    target = root / f"{slug}-{fingerprint}"
    if not target.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=root))
        try:
            for name, data in package["files"].items():
                relative = PurePosixPath(name)
                if relative.is_absolute() or any(part in ("", ".", "..") for part in relative.parts):
                    raise ValueError(f"exercise {slug}: refusing the file name {name!r} (outside its folder)")
                path = staging.joinpath(*relative.parts)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            arrived = load_exercise(staging).fingerprint
            if arrived != fingerprint:
                raise ValueError(f"exercise {slug} arrived with fingerprint {arrived}, not {fingerprint}: "
                                 "its files changed on the way")
            try:
                staging.rename(target)
            except OSError:  # unpacked meanwhile by another thread: the same files
                pass
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return load_exercise(target)


def report_data(report: Report) -> str:
    """Every field of a report as JSON text (more than the report/1 document: the renderers'
    hints, observations, visibility and captured output too)."""
    return json.dumps(dataclasses.asdict(report))


def report_from_data(text: str) -> Report:
    data = json.loads(text)
    checks = tuple(CheckResult.from_data(check) for check in data.pop("checks"))
    return Report(checks=checks, **data)


@functools.lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    """What must be the same on the machine that asks and on every worker: the releases, and a
    digest of the grader's own code (a development checkout keeps its version number while its
    checks change, and results are keyed by the version)."""
    code = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]  # grader/
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] in ("exercises", "templates"):  # an installed copy's data
            continue
        code.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return {"jaxgrade": __version__, "jax": version("jax"), "jaxlib": version("jaxlib"),
            "grader_code": code.hexdigest()[:16]}


# -- on a worker ---------------------------------------------------------------------------------
class WorkerGrader:
    """What one Dask worker process keeps between tasks: a warm pool and the exercises it
    unpacked and prepared (compilation cache warmed, inputs drawn), by (fingerprint, seed).
    Thread-safe: a worker runs ``--nthreads`` tasks at once, sharing one zygote."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix="jaxgrade-", dir=root))  # 0700: no sandbox uid reads it
        (self.root / "exercises").mkdir()
        (self.root / "submissions").mkdir()
        self._lock = threading.Lock()
        self._pool: Pool | None = None
        self._prepared: dict[tuple[str, int], Worker] = {}  # by (fingerprint, seed)
        self._preparing: dict[tuple[str, int], threading.Lock] = {}

    @property
    def pool(self) -> "Pool":
        from grader.sandbox.pool import Pool
        with self._lock:
            if self._pool is None:
                self._pool = Pool()
            return self._pool

    def _worker(self, package: dict[str, Any], seed: int) -> "Worker":
        """The per-submission grader for this exercise and seed, prepared once per process."""
        from grader.batch.run import Worker, prepare
        from grader.engine import compile_cache_directory
        key = (str(package["fingerprint"]), seed)
        with self._lock:
            if key in self._prepared:
                return self._prepared[key]
            gate = self._preparing.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                if key in self._prepared:
                    return self._prepared[key]
            exercise = unpack_exercise(package, self.root / "exercises")
            self.pool.warm(exercise.devices, compile_cache_directory())  # imports JAX while prepare() runs
            with _machine_lock("warming"):  # the worker processes of one machine share its cache
                cache = prepare(exercise, seed, launcher=self.pool.launch)
            work = Worker(exercise, seed, cache, self.pool.launch)
            with self._lock:
                self._prepared[key] = work
            return work

    def grade(self, package: dict[str, Any], seed: int, name: str, data: bytes, source: str,
              helpers: tuple[tuple[str, bytes], ...] = (), notes: tuple[str, ...] = ()) -> Report:
        """Grade one submission as ``jaxgrade check`` would: the file keeps its name (the module
        name and the messages come from it) in a folder of its own with its helper modules,
        hidden from its child."""
        from grader.batch.submissions import Submission
        if name in ("", ".", "..") or PurePosixPath(name).name != name or "\\" in name:
            raise ValueError(f"refusing the submission file name {name!r}: a name, not a path")
        placed = [(helper_path(helper), content) for helper, content in helpers]  # refused before anything is written
        work = self._worker(package, seed)
        folder = Path(tempfile.mkdtemp(dir=self.root / "submissions"))
        try:
            modules = []
            for at, content in placed:  # at its import path, as in local grading (a package keeps its folders)
                module = folder.joinpath(*at.parts)
                module.parent.mkdir(parents=True, exist_ok=True)
                module.write_bytes(content)
                modules.append(module)
            path = folder / name  # last: the graded file is never a helper's copy
            path.write_bytes(data)
            submission = Submission(student=source, path=path, source=source,
                                    sha256=hashlib.sha256(data).hexdigest(), helpers=tuple(modules),
                                    notes=tuple(notes))
            return work.report(submission)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            self._prepared.clear()
        if pool is not None:
            pool.close()
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def _machine_lock(name: str) -> Iterator[None]:
    """An exclusive lock shared by every process of this machine that uses the same cache
    (several worker processes would otherwise all grade the reference to warm it)."""
    from grader.cache import cache_root
    root = cache_root()
    if root is None:
        yield
        return
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_grader: WorkerGrader | None = None
_grader_lock = threading.Lock()


def worker_grader() -> WorkerGrader:
    """This worker process's grader, made on first use in the worker's scratch folder (which
    Dask removes with the worker, and purges after a crash)."""
    global _grader
    with _grader_lock:
        if _grader is None:
            try:
                from distributed import get_worker
                scratch = Path(get_worker().local_directory)
            except (ImportError, ValueError):  # not in a Dask worker (called directly)
                scratch = Path(tempfile.gettempdir())
            _grader = WorkerGrader(scratch)
            atexit.register(_grader.close)
        return _grader


def worker_status() -> dict[str, Any]:
    """What this worker process holds, for an operator's ``client.run(worker_status)``: its pid,
    whether JAX was imported into it (it must not be: only its warm processes import JAX), the
    pids of those warm processes and the exercises it has prepared, as (fingerprint, seed)."""
    grader = _grader
    pool = grader._pool if grader is not None else None
    return {"pid": os.getpid(), "jax_imported": "jax" in sys.modules,
            "zygotes": [z.process.pid for z in pool._zygotes.values() if z.alive] if pool is not None else [],
            "prepared": sorted(grader._prepared) if grader is not None else []}


def grade_task(package: dict[str, Any], seed: int, expected: dict[str, str], name: str, data: bytes,
               source: str, helpers: tuple[tuple[str, bytes], ...] = (), notes: tuple[str, ...] = ()) -> str:
    """The Dask task: one submission graded on this worker, its report as JSON text."""
    mine = versions()
    if mine != expected:
        try:
            from distributed import get_worker
            where = get_worker().address
        except (ImportError, ValueError):
            where = "a worker"
        raise WorkerMismatch(f"{where} runs {_describe(mine)}, the grader that asked runs {_describe(expected)}: "
                             "install the same versions on every worker (same image, same lock file)")
    return report_data(worker_grader().grade(package, seed, name, data, source, helpers, notes))


def _describe(found: dict[str, str]) -> str:
    return ", ".join(f"{name} {value}" for name, value in found.items())


def _identity(value: Any) -> Any:
    """The exercise package as a task result: workers fetch it once from each other, and if every
    copy is lost the scheduler recomputes it from the task (which a scattered value could not be)."""
    return value


# -- on the machine that asks ---------------------------------------------------------------------------
class DaskBackend:
    """A :class:`grader.batch.run.Backend` that grades on the Dask cluster at ``address``
    (``tcp://HOST:PORT``), or through an existing ``client``."""

    def __init__(self, address: str | None = None, *, client: "Client | None" = None,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S, workers_timeout_s: float = WORKERS_TIMEOUT_S) -> None:
        if (address is None) == (client is None):
            raise ValueError("give either the scheduler's address or a client (exactly one)")
        self.address = address or str(client.scheduler.address)  # type: ignore[union-attr]
        self._client, self._owns_client = client, client is None
        self.connect_timeout_s, self.workers_timeout_s = connect_timeout_s, workers_timeout_s
        self._package: Any = None
        self._seed = 0
        # dask future -> the future grade_class waits on, and what its result is rendered with
        self._running: dict[Any, tuple[Future[Graded], Submission, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._slots, self._slots_at = 0, 0.0

    @property
    def client(self) -> "Client":
        if self._client is None:
            raise RuntimeError("the backend is not started")
        return self._client

    def warm(self, exercise: Exercise) -> None:
        """Nothing to begin before the intake: the workers keep their zygotes warm between batches."""

    def start(self, exercise: Exercise, seed: int, size: int | None = None) -> None:
        """``size`` is not used: each worker process prepares once for whatever it is sent,
        later batches included, and its machine's cache is filled from the variants as well."""
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError("grading on a cluster needs dask.distributed: pip install 'jaxgrade[cluster]'") from None
        if self._client is None:
            try:
                self._client = Client(self.address, timeout=self.connect_timeout_s, set_as_default=False)
            except (OSError, TimeoutError) as error:
                raise ClusterError(f"cannot reach the Dask scheduler at {self.address} ({error}); start one with "
                                   "'dask scheduler' and give its address (see docs/cluster.md)") from None
        try:
            self._client.wait_for_workers(1, timeout=self.workers_timeout_s)
        except TimeoutError:
            raise ClusterError(f"the Dask cluster at {self.address} has no workers after {self.workers_timeout_s:g} s; "
                               f"start some with 'dask worker {self.address}'") from None
        self._seed = seed
        self._package = self._client.submit(_identity, pack_exercise(exercise), pure=False,
                                            key=f"jaxgrade-exercise-{exercise.fingerprint}-{uuid.uuid4().hex[:8]}")

    def slots(self) -> int:
        """Submissions to keep in flight: a couple per worker thread now in the cluster, so
        workers that join during the batch get work too (asked at most once a second)."""
        now = time.monotonic()
        if now - self._slots_at > 1.0:
            try:
                threads = sum(self.client.nthreads().values())
            except Exception:  # the scheduler is busy or briefly away: keep the last figure
                threads = 0
            self._slots = max(SLOTS_PER_THREAD * threads, self._slots, SLOTS_PER_THREAD)
            self._slots_at = now
        return self._slots

    def workers(self) -> int:
        """The most worker threads the cluster had while grading (as :meth:`slots` counts them)."""
        return max(1, self._slots // SLOTS_PER_THREAD)

    def submit(self, submission: "Submission", key: dict[str, Any]) -> Future[Graded]:
        data = submission.path.read_bytes()
        waited: Future[Graded] = Future()
        helpers = tuple((helper_at(submission.path, path).as_posix(), path.read_bytes()) for path in submission.helpers)
        running = self.client.submit(grade_task, self._package, self._seed, versions(), submission.path.name, data,
                                     submission.source, helpers, submission.notes,
                                     key=f"jaxgrade-grade-{uuid.uuid4().hex}", pure=False, retries=RETRIES)
        with self._lock:
            self._running[running] = (waited, submission, key)
        running.add_done_callback(self._arrived)
        return waited

    def _arrived(self, running: Any) -> None:
        """On Dask's callback thread: hand the rendered result (or the failure) to ``grade_class``."""
        with self._lock:
            waited, submission, key = self._running.pop(running, (None, None, None))
        if waited is None or not waited.set_running_or_notify_cancel():
            return
        try:
            if running.cancelled():
                raise RuntimeError("cancelled on the cluster")
            waited.set_result(render_student(submission, report_from_data(running.result()), key))
        except BaseException as error:  # the grader's own failure, or the cluster's: graded again next run
            waited.set_exception(error)

    def abandon(self) -> None:
        """Interrupted: take every submission still in flight off the cluster."""
        with self._lock:
            running = list(self._running)
        if running and self._client is not None:
            self._client.cancel(running, force=True)

    def close(self) -> None:
        self.abandon()
        if self._client is not None and self._package is not None:
            self._client.cancel([self._package])
            self._package = None
        if self._client is not None and self._owns_client:
            self._client.close()
            self._client = None
