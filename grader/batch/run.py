"""``jaxgrade grade``: grade a whole class, fast, resumably, with the verdicts of ``check``.

    jaxgrade grade submissions/ -e SLUG -o out/ [-j N] [--seed N] [--regrade] [--scheduler tcp://HOST:PORT]

With ``--scheduler`` the submissions are graded on a Dask cluster (a :class:`Backend` from
:mod:`grader.batch.distributed`, docs/cluster.md); everything else below is the same.

Intake (:mod:`grader.batch.intake`) → grading → results on disk:

    out/gradebook.csv                       one row per student (grader.batch.gradebook)
    out/summary.html, out/summary.md        the class summary (grader.batch.summary)
    out/students/<student>/report.json      the jaxgrade.report/1 document
    out/students/<student>/report.html|md   the report for reading
    out/students/<student>/result.json      jaxgrade.result/1: the key it was graded under + the report

Each submission is graded exactly as ``jaxgrade check`` grades it (``grader.engine.grade``:
its own fresh child process, the same checks, limits and seed) but the children are forked
from a warm process that imported JAX once (:mod:`grader.sandbox.pool`), ``-j`` of them at a time,
and Hypothesis draws the inputs once for the whole class. The submissions the last run took
longest over start first (``--regrade`` or an exercise changed); a report never depends on the
order.

Nothing is lost: each student's files are written (atomically, ``result.json`` last) as soon
as that student is graded, and the gradebook (whole rows only, replaced in one step) is
rewritten twice a second while results come in and once more at the end or on Ctrl-C. So an
interrupted run leaves every finished result and a complete gradebook of them; a killed one
leaves every finished result and a gradebook at most half a second behind, which the next
run completes. A result is reused
when its key matches: (submission sha256, exercise fingerprint, jaxgrade version, seed). So
a rerun continues where the last one stopped, an unchanged submission is not regraded, a
changed submission or a changed exercise is, and ``--regrade`` regrades everything. A result
whose failure came from the grader's environment (report status ``error``, or any check with
status ``error``) is written for reading but never reused: the next run grades it again.

Everything written under ``out/`` is private to the user running the grader: folders are
created with mode 0700 and files with 0600 (whatever the umask; never widened and narrowed
later), so a sandboxed child running under another uid cannot read the gradebook or a
classmate's report.

The per-student reports here are the *instructor's* view (every check, hidden ones too):
this folder is the instructor's. Feedback for a student is rendered for the ``student``
audience (``grader.report.render.render(report, fmt, audience="student")``), which withholds hidden checks.
"""
from __future__ import annotations

import errno
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from grader import __version__
from grader.authoring.exercise import Exercise, require_key
from grader.batch.gradebook import write_gradebook
from grader.batch.intake import find_submissions
from grader.batch.lms_names import Roster
from grader.batch.processes import GradingProcesses
from grader.batch.progress import Progress
from grader.batch.similarity import class_similarity
from grader.batch.results import (Graded, expected_seconds, label, last_duration, load_result, private_folder,
                                  preload_rendering, render_student, result_key, reusable, student_folder,
                                  write_student)
from grader.batch.submissions import Intake, Problem, Submission
from grader.errors import GraderFailure, IntakeError
from grader.sandbox.settling import settle
from grader.report.result import Report
from grader.sandbox.isolation import IsolationNotice
from grader.batch.summary import summarize, write_summary
from grader.batch.throughput import Stopwatch, Throughput

if TYPE_CHECKING:
    from grader.sandbox.pool import Pool

GRADEBOOK_EVERY_S = 0.5


@dataclass
class BatchOutcome:
    """What a run did. ``failed`` are submissions the grader itself could not finish (a grader
    bug or a lost worker): they have no result, so the next run tries them again."""
    out: Path
    intake: Intake
    graded: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    interrupted: bool = False
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    throughput: Throughput | None = None  # how fast it graded (None: nothing to grade)
    # The grader's own disk ran short: why (one line), and the files of the run it could not write.
    out_of_space: str = ""
    unsaved: list[str] = field(default_factory=list)

    @property
    def gradebook(self) -> Path:
        return self.out / "gradebook.csv"

    @property
    def summary(self) -> Path:
        return self.out / "summary.html"


def prepare(exercise: Exercise, seed: int, variants: bool = True,
            launcher: Callable[..., Any] | None = None) -> str | None:
    """Once per run, before any worker starts: the compilation cache filled from the reference
    (and, with ``variants``, from the exercise's right/ and wrong/ variants: most of a class
    is wrong; ``grader.engine.variants_repay`` says when that is worth it), their children
    started by ``launcher``, and every check's work that needs no submission done (so workers
    share one draw, and inherit its answers, never racing for them)."""
    from grader.engine import warm_compile_cache, warm_compile_cache_from_variants
    cache = warm_compile_cache(exercise, launcher)
    if cache is not None and variants:
        warm_compile_cache_from_variants(exercise, cache, launcher=launcher)
    prepare_checks(exercise, seed)
    return cache


def prepare_checks(exercise: Exercise, seed: int) -> None:
    """Every check's work that needs no submission under ``seed`` (``Check.prepare``: inputs
    drawn, their answers computed), done once for every grading thread and process."""
    for check in exercise.checks:
        check.prepare(seed, exercise.signature)



class Worker:
    """Grades one submission as ``jaxgrade check`` would, and renders its files (in a grading
    process, :mod:`grader.batch.processes`, or a thread of this one)."""

    def __init__(self, exercise: Exercise, seed: int, cache: str | None, launcher: Callable[..., Any]) -> None:
        self.exercise, self.seed, self.cache, self._launcher = exercise, seed, cache, launcher
        self._local = threading.local()

    def _launch(self, *args: Any) -> Any:
        try:
            return self._launcher(*args)
        except Exception as error:
            self._local.failure = f"{type(error).__name__}: {error}"
            raise

    def __call__(self, submission: Submission, key: dict[str, Any]) -> Graded:
        return render_student(submission, self.report(submission), key)

    def report(self, submission: Submission) -> Report:
        from grader.engine import grade
        self._local.failure = None
        report = grade(self.exercise, submission.path, seed=self.seed, display_path=submission.source,
                       compile_cache=self.cache or False, launcher=self._launch, hide=submission.others,
                       helpers=submission.helpers, notes=submission.notes)
        if self._local.failure:  # a check ran into it: its "error" verdict is the grader's, not the student's
            raise GraderFailure(self._local.failure)
        return report


class Backend(Protocol):
    """Where a batch's submissions are graded. ``grade_class`` keeps up to ``slots()`` of them in
    flight and does everything else itself (resuming, progress, every file written), so grading
    here and on a cluster (``grader.batch.distributed.DaskBackend``) give the same results on disk."""

    def warm(self, exercise: Exercise) -> None:
        """Begin, before the intake, what takes long and needs only the exercise."""

    def start(self, exercise: Exercise, seed: int, size: int | None = None) -> None:
        """Ready to grade ``size`` submissions (None: as many as come) of ``exercise`` under ``seed``."""

    def slots(self) -> int: ...

    def workers(self) -> int:
        """Submissions it grades at once (the summary states it)."""

    def submit(self, submission: Submission, key: dict[str, Any]) -> Future[Graded]:
        """Grade ``submission`` and render its files, its result stored under ``key``."""

    def abandon(self) -> None:
        """Interrupted: stop what is in flight now (its futures are cancelled or ignored)."""

    def close(self) -> None: ...


class LocalBackend:
    """This machine: ``jobs`` grading processes (default: the number of CPUs,
    :mod:`grader.batch.processes`) whose children are forked from one warm
    :class:`grader.sandbox.pool.Pool`. With a ``launcher`` (it belongs to this process), ``jobs``
    threads of this process, whose children ``launcher`` starts."""

    def __init__(self, jobs: int | None = None, launcher: Callable[..., Any] | None = None) -> None:
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self._launcher = launcher
        self._pool: Pool | None = None
        self._threads: ThreadPoolExecutor | None = None
        self._processes: GradingProcesses | None = None
        self._work: Worker | None = None
        self._unwarmed: Exercise | None = None  # variants skipped: filled after the run (grader.batch.warming)

    def warm(self, exercise: Exercise) -> None:
        """Start the zygote: its import of JAX (the longest part of a run's start, 1.5-2 s on a
        gVisor host) overlaps the intake, the drawing of inputs and the filling of the cache."""
        from grader.cache import compile_cache_directory  # not grader.engine's imports (Hypothesis's): 0.1 s
        from grader.sandbox.pool import Pool
        if self._launcher is None and self._pool is None:
            self._pool = Pool()
            self._pool.warm(exercise.devices, compile_cache_directory())

    def start(self, exercise: Exercise, seed: int, size: int | None = None) -> None:
        from grader.engine import variants_repay
        from grader.sandbox.process import child_environment
        launcher = self._launcher
        if launcher is None:
            self.warm(exercise)  # when grade_class did not already
            assert self._pool is not None
            launcher = self._pool.launch
        # A class too small to repay the variants' gradings (a first run of the term: 9.5 s of
        # 15 on the seed exercise) compiles what its mistakes compile itself; the variants are
        # graded in the background once the run is over (close), for the next runs.
        variants = size is None or variants_repay(exercise, size)
        cache = prepare(exercise, seed, variants=variants, launcher=launcher)
        self._unwarmed = None if variants or cache is None else exercise
        if self._pool is None:
            self._work = Worker(exercise, seed, cache, launcher)
            self._threads = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="jaxgrade-grade")
        else:
            env = child_environment(exercise.devices, "", "", cache)  # what every submission's child runs in
            preload_rendering()
            self._processes = GradingProcesses(self.jobs, self._pool, env,
                                               lambda start: Worker(exercise, seed, cache, start))

    def slots(self) -> int:
        return self.jobs * 2  # a short queue: an interrupt leaves little started

    def workers(self) -> int:
        return self.jobs

    def submit(self, submission: Submission, key: dict[str, Any]) -> Future[Graded]:
        if self._processes is not None:
            return self._processes.submit(submission, key)
        if self._threads is None or self._work is None:
            raise RuntimeError("LocalBackend.start() first")
        return self._threads.submit(self._work, submission, key)

    def abandon(self) -> None:
        self._unwarmed = None  # interrupted: nothing more is started
        if self._pool is not None:
            self._pool.close()  # kills the running children: the workers return at once

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=True, cancel_futures=True)
        if self._processes is not None:
            self._processes.close()
        if self._pool is not None:
            self._pool.close()
        if self._unwarmed is not None:
            from grader.batch import warming
            warming.start(self._unwarmed)
            self._unwarmed = None


def grade_class(exercise: Exercise, source: Path, out: Path, *, jobs: int | None = None, seed: int = 0,
                regrade: bool = False, progress: Progress | Callable[[int], Progress] | None = None,
                launcher: Callable[..., Any] | None = None, backend: Backend | None = None,
                roster: Roster | None = None) -> BatchOutcome:
    """Grade every submission in ``source`` into ``out``; see the module docstring.

    ``jobs``: submissions graded at once (default: the number of CPUs). ``launcher``: how
    children start (default: forked from a warm :class:`grader.sandbox.pool.Pool`). ``backend``: grade
    elsewhere instead (``grader.batch.distributed.DaskBackend``: a cluster); ``jobs`` and ``launcher``
    then do not apply. The backend is closed when the batch ends. ``roster``: the LMS's list of
    the class (``--lms-file``), which a download's ids and names are checked against."""
    require_key([exercise], "jaxgrade grade")  # the cache is filled from the reference, hidden checks count
    if backend is None:
        backend = LocalBackend(jobs, launcher)
    elif jobs is not None or launcher is not None:
        raise ValueError("jobs and launcher are for local grading; a backend decides them itself")
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.is_dir():
        private_folder(out)
    students_dir = out / "students"
    backend.warm(exercise)
    unpacked = Path(tempfile.mkdtemp(prefix="jaxgrade-intake-"))
    try:
        intake = find_submissions(source, exercise.function, unpack_to=unpacked, skip=(out,), roster=roster)
        if not intake.submissions and not intake.problems:  # most likely a wrong path: touch nothing
            raise IntakeError(f"found nothing to grade in {source}: give a folder of .py files, a folder of "
                              "per-student folders, or a .zip of either")
        outcome = BatchOutcome(out=out, intake=intake)
        check_ids = [c.id for c in exercise.checks]
        todo: list[tuple[Submission, dict[str, Any]]] = []
        lasted: dict[str, float] = {}
        for submission in intake.submissions:
            key = result_key(exercise, submission.sha256, seed)
            stored = load_result(students_dir / student_folder(submission.student))
            if not regrade and stored is not None and reusable(stored, key, submission.student):
                # The LMS's name and LATE mark are today's download's, not the stored run's.
                outcome.results[submission.student] = {**stored, "name": submission.name, "late": submission.late}
                outcome.reused.append(submission.student)
            else:
                # hidden from its child like the classmates' files: the gradebook and reports in out/
                todo.append((replace(submission, others=(*submission.others, str(out.resolve()))), key))
                lasted[submission.student] = last_duration(stored)
        # The longest first, by the last run's durations (never graded: first, in intake order):
        # a slow submission started last keeps the run waiting on one worker while the others idle.
        todo.sort(key=lambda item: -lasted[item[0].student])

        saved_at = 0.0

        def save(soon: bool = False) -> None:
            """Rewrite the gradebook; with ``soon``, at most every GRADEBOOK_EVERY_S seconds (a big
            class would otherwise rewrite n rows n times; after a crash it lags by that much)."""
            nonlocal saved_at
            if soon and time.monotonic() - saved_at < GRADEBOOK_EVERY_S:
                return
            saved_at = time.monotonic()
            try:
                write_gradebook(out / "gradebook.csv", check_ids, outcome.results.values(), problems_of(outcome),
                                (exercise.version, exercise.fingerprint), lms=intake.layout in ("canvas", "moodle"))
            except OSError as error:  # no room now: the next save, or the next run, writes it
                if error.errno not in NO_SPACE:
                    raise
                _no_space(outcome, error, out)
                if not soon:
                    outcome.unsaved.append(str(out / "gradebook.csv"))

        save()
        meter = progress(len(todo)) if callable(progress) else progress
        if meter:  # its ETA weighs each submission by what it took last time
            expected = expected_seconds(lasted)
            meter.expect({label(s.student, s.name): expected[s.student] for s, _ in todo})
        isolation = IsolationNotice(getattr(meter, "stream", None))  # the layers missing here, said once
        stopwatch = Stopwatch()
        try:
            if todo:
                backend.start(exercise, seed, len(todo))
                pending: dict[Future[Graded], tuple[Submission, dict[str, Any]]] = {}
                queue = iter(todo)

                def fill() -> None:
                    while len(pending) < backend.slots():
                        item = next(queue, None)
                        if item is None:
                            return
                        pending[backend.submit(*item)] = item

                try:
                    fill()
                    while pending:
                        done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                        for future in done:
                            submission, key = pending.pop(future)
                            fill()
                            try:
                                result = future.result()
                            except Exception as error:  # the grader's own failure: retried next run
                                outcome.failed[submission.student] = f"{type(error).__name__}: {error}"
                                if meter:
                                    meter.update(label(submission.student, submission.name), "error", "not graded")
                                continue
                            graded = _record(outcome, students_dir, submission, result)
                            report = result.report
                            isolation.report(report["environment"].get("protections"))
                            save(soon=True)
                            if meter:
                                meter.update(label(submission.student, submission.name), report["status"],
                                             f"{report['score']:g}/{report['max_score']:g}" if graded else "not graded")
                except KeyboardInterrupt:
                    outcome.interrupted = True
                    for future in pending:
                        future.cancel()
                    backend.abandon()
        finally:
            backend.close()
            if todo:
                outcome.throughput = stopwatch.stop(len(outcome.graded), backend.workers(),
                                                    local=isinstance(backend, LocalBackend))
            if meter:
                meter.close()
            save()
            try:
                write_summary(out, summary_data(exercise, seed, outcome))
            except OSError as error:
                if error.errno not in NO_SPACE:
                    raise
                _no_space(outcome, error, out)
                outcome.unsaved.append(str(out / "summary.html"))
        return outcome
    finally:
        backend.close()  # closed already, unless the intake or the gradebook's first write failed
        shutil.rmtree(unpacked, ignore_errors=True)
        settle()  # what the children left, given back in the background while the class was graded


NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def _no_space(outcome: BatchOutcome, error: OSError, where: Path | str) -> str:
    """Note that the grader's disk ran short (the first time says where); the reason, as a gradebook note says it."""
    reason = f"{error.strerror or error} in {where}"
    outcome.out_of_space = outcome.out_of_space or reason
    return reason


def _environment_reason(report: dict[str, Any]) -> str:
    """Why the grader's environment left a report ungraded (status ``error``): its first check's message."""
    return next((c["message"] for c in report["checks"] if c["status"] == "error"), "the grader's environment failed")


def _record(outcome: BatchOutcome, students_dir: Path, submission: Submission, graded: Graded) -> bool:
    """Write one student's result; True if it is the student's grade. A report the grader's
    environment decided (status ``error``: no sandbox, no room for the copy) is kept for reading
    only, and the student is "not graded, grade again"; so is one whose files found no room."""
    folder = students_dir / student_folder(submission.student)
    try:
        write_student(folder, graded)
    except OSError as error:
        if error.errno not in NO_SPACE:
            raise
        outcome.failed[submission.student] = f"no room for its results: {_no_space(outcome, error, folder)}"
        return False
    if graded.report["status"] == "error":
        reason = _environment_reason(graded.report)
        if any(os.strerror(code) in reason for code in NO_SPACE):
            outcome.out_of_space = outcome.out_of_space or reason
        outcome.failed[submission.student] = reason
        return False
    outcome.results[submission.student] = graded.record
    outcome.graded.append(submission.student)
    return True


def problems_of(outcome: BatchOutcome) -> list[Problem]:
    """What was not graded: the intake's problems, and the submissions the grader itself failed
    on (a row in the gradebook and the summary each, so no student silently goes missing)."""
    return list(outcome.intake.problems) + [
        Problem(student, student, "grader_error", f"the grader failed ({message}); grade again to retry")
        for student, message in outcome.failed.items()]


def summary_data(exercise: Exercise, seed: int, outcome: BatchOutcome) -> dict[str, Any]:
    checks = [{"id": c.id, "title": c.title, "category": c.category, "max_score": exercise.points[c.id]}
              for c in exercise.checks]
    problems = problems_of(outcome)
    info = {"slug": exercise.slug, "title": exercise.title, "version": exercise.version,
            "fingerprint": exercise.fingerprint, "max_score": exercise.max_score, "seed": seed, "jaxgrade": __version__}
    return summarize(outcome.results.values(), problems, exercise=info, checks=checks,
                     names=outcome.intake.names, notes=outcome.intake.notes,
                     throughput=outcome.throughput.as_data() if outcome.throughput else None,
                     similar=class_similarity(outcome.intake.submissions, exercise.starter))
