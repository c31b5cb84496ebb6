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
and Hypothesis draws the inputs once for the whole class.

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

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, TextIO

from grader import __version__
from grader.exercise import Exercise
from grader.batch.gradebook import write_atomically, write_gradebook
from grader.batch.intake import find_submissions
from grader.batch.submissions import Intake, Problem, Submission
from grader.batch.safe_text import for_terminal
from grader.errors import GraderFailure, IntakeError
from grader.report.result import Report
from grader.sandbox.isolation import IsolationNotice
from grader.batch.summary import summarize, write_summary

if TYPE_CHECKING:
    from grader.sandbox.pool import Pool

RESULT_SCHEMA = "jaxgrade.result/1"
REPORT_FORMATS = ("json", "html", "md")
AUDIENCE = "instructor"
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

    @property
    def gradebook(self) -> Path:
        return self.out / "gradebook.csv"

    @property
    def summary(self) -> Path:
        return self.out / "summary.html"


def result_key(exercise: Exercise, sha256: str, seed: int) -> dict[str, Any]:
    """What a stored result is valid for: the same file, exercise version, grader and seed."""
    return {"sha256": sha256, "exercise": exercise.slug, "exercise_version": exercise.fingerprint,
            "jaxgrade": __version__, "seed": seed}


# 64 bits: a student cannot search out a name whose folder is a classmate's (32 bits they could).
_HASH_CHARS = 16
_HASHED = re.compile(rf"-[0-9a-f]{{{_HASH_CHARS}}}$")


def student_folder(student: str) -> str:
    """A folder name for a student id that is safe on every file system, the same in every run,
    and never another student's: an id that is plain (lower case, no character a file system
    mangles, short) is its own folder; every other id gets a short hash of itself, and so does
    a plain id that ends like such a hash ("jane_doe-ed37d99b8d5e3a1f"), so none can take a
    hashed name."""
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", student).strip(".") or "_"
    if plain == student and plain.lower() == plain and len(plain) <= 80 and not _HASHED.search(plain):
        return plain
    digest = hashlib.sha256(student.encode("utf-8", "surrogateescape")).hexdigest()[:_HASH_CHARS]
    return f"{plain[:80]}-{digest}"


def load_result(directory: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((directory / "result.json").read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("schema") == RESULT_SCHEMA else None


def environment_failed(report: dict[str, Any]) -> bool:
    """Whether the grader's environment (not the student) decided this report: it then says
    nothing about the submission, and must be graded again rather than reused."""
    return report.get("status") == "error" or any(c.get("status") == "error" for c in report.get("checks", ()))


def reusable(stored: dict[str, Any], key: dict[str, Any], student: str) -> bool:
    """A stored result stands for this run: same key, same student, and decided by the student's code."""
    return (stored.get("key") == key and stored.get("student") == student
            and isinstance(stored.get("report"), dict) and not environment_failed(stored["report"]))


def private_folder(path: Path) -> Path:
    """``path`` as a folder only its owner may enter: created with mode 0700 (a folder of ours
    left wider by an older jaxgrade is narrowed)."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        status = path.lstat()
        if path.is_dir() and not path.is_symlink() and status.st_mode & 0o077 and status.st_uid == os.getuid():
            path.chmod(0o700)
    return path


def label(student: str, name: str | None) -> str:
    """How a student is named to the instructor: the LMS's name with its id, or the key alone."""
    return f"{name} ({student})" if name else student


def _write_student(directory: Path, submission: Submission, report: Report, key: dict[str, Any]) -> dict[str, Any]:
    """The student's reports, then ``result.json`` (the marker that the result is complete).
    A report the grader's environment decided is stored without a key: never reused."""
    from grader.report.render import render
    private_folder(directory.parent)
    private_folder(directory)
    for format in REPORT_FORMATS:
        write_atomically(directory / f"report.{format}", render(report, format, audience=AUDIENCE))
    document = report.to_dict()
    record = {"schema": RESULT_SCHEMA, "student": submission.student, "name": submission.name,
              "late": submission.late, "source": submission.source,
              "key": None if environment_failed(document) else key,
              "graded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "report": document}
    write_atomically(directory / "result.json", json.dumps(record, indent=1) + "\n")
    return record


class Progress:
    """Counts, rate and ETA: one redrawn line on a terminal, one plain line per result otherwise."""

    def __init__(self, total: int, stream: TextIO | None = None, interactive: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.counts = {"passed": 0, "failed": 0, "error": 0}

    def _eta(self) -> str:
        elapsed = time.monotonic() - self.started
        if not self.done:
            return "--:--"
        left = int(elapsed / self.done * (self.total - self.done))
        return f"{left // 60}:{left % 60:02d}"

    def update(self, student: str, status: str, score: str) -> None:
        """One more result. ``student`` comes from a file or folder name: escaped here, so an
        escape sequence or a newline in it cannot redraw or split the line."""
        self.done += 1
        self.counts[status] = self.counts.get(status, 0) + 1
        rate = self.done / max(time.monotonic() - self.started, 1e-9)
        if self.interactive:
            width = 24
            filled = int(width * self.done / max(self.total, 1))
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(f"\r[{bar}] {self.done}/{self.total} · {self.counts['passed']} full marks · "
                              f"{self.counts['failed']} not · {self.counts['error']} errors · {rate:.1f}/s · "
                              f"ETA {self._eta()}\033[K")  # erase what a longer line left
        else:
            self.stream.write(f"[{self.done}/{self.total}] {for_terminal(student)}: {score} {status} "
                              f"(ETA {self._eta()})\n")
        self.stream.flush()

    def close(self) -> None:
        if self.interactive and self.done:
            self.stream.write("\n")
            self.stream.flush()


def prepare(exercise: Exercise, seed: int, variants: bool = True,
            launcher: Callable[..., Any] | None = None) -> str | None:
    """Once per run, before any worker starts: the compilation cache filled from the reference
    (and, with ``variants``, from the exercise's right/ and wrong/ variants: most of a class
    is wrong), their children started by ``launcher``, and every property check's inputs
    drawn (so workers share one draw and never race for it)."""
    from grader.engine import warm_compile_cache, warm_compile_cache_from_variants
    cache = warm_compile_cache(exercise, launcher)
    if cache is not None and variants:
        warm_compile_cache_from_variants(exercise, cache, launcher=launcher)
    draw_inputs(exercise, seed)
    return cache


def draw_inputs(exercise: Exercise, seed: int) -> None:
    """Every property check's inputs under ``seed``, drawn once for every grading thread."""
    for check in exercise.checks:
        draw = getattr(check, "draw", None)
        if callable(draw):
            draw(seed)



class Worker:
    """Grades one submission in a worker thread, as ``jaxgrade check`` would."""

    def __init__(self, exercise: Exercise, seed: int, cache: str | None, launcher: Callable[..., Any]) -> None:
        self.exercise, self.seed, self.cache, self._launcher = exercise, seed, cache, launcher
        self._local = threading.local()

    def _launch(self, *args: Any) -> Any:
        try:
            return self._launcher(*args)
        except Exception as error:
            self._local.failure = f"{type(error).__name__}: {error}"
            raise

    def __call__(self, submission: Submission) -> Report:
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

    def start(self, exercise: Exercise, seed: int) -> None: ...

    def slots(self) -> int: ...

    def submit(self, submission: Submission) -> Future[Report]: ...

    def abandon(self) -> None:
        """Interrupted: stop what is in flight now (its futures are cancelled or ignored)."""

    def close(self) -> None: ...


class LocalBackend:
    """This machine: ``jobs`` grading threads (default: the number of CPUs) whose children are
    forked from a warm :class:`grader.sandbox.pool.Pool`, or started by ``launcher``."""

    def __init__(self, jobs: int | None = None, launcher: Callable[..., Any] | None = None) -> None:
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self._launcher = launcher
        self._pool: Pool | None = None
        self._threads: ThreadPoolExecutor | None = None
        self._work: Worker | None = None

    def start(self, exercise: Exercise, seed: int) -> None:
        from grader.engine import compile_cache_directory
        from grader.sandbox.pool import Pool
        launcher = self._launcher
        if launcher is None:
            self._pool = Pool()
            self._pool.warm(exercise.devices, compile_cache_directory())  # imports JAX while prepare() runs
            launcher = self._pool.launch
        cache = prepare(exercise, seed, launcher=launcher)
        self._work = Worker(exercise, seed, cache, launcher)
        self._threads = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="jaxgrade-grade")

    def slots(self) -> int:
        return self.jobs * 2  # a short queue: an interrupt leaves little started

    def submit(self, submission: Submission) -> Future[Report]:
        if self._threads is None or self._work is None:
            raise RuntimeError("LocalBackend.start() first")
        return self._threads.submit(self._work, submission)

    def abandon(self) -> None:
        if self._pool is not None:
            self._pool.close()  # kills the running children: the workers return at once

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=True, cancel_futures=True)
        if self._pool is not None:
            self._pool.close()


def grade_class(exercise: Exercise, source: Path, out: Path, *, jobs: int | None = None, seed: int = 0,
                regrade: bool = False, progress: Progress | Callable[[int], Progress] | None = None,
                launcher: Callable[..., Any] | None = None, backend: Backend | None = None) -> BatchOutcome:
    """Grade every submission in ``source`` into ``out``; see the module docstring.

    ``jobs``: submissions graded at once (default: the number of CPUs). ``launcher``: how
    children start (default: forked from a warm :class:`grader.sandbox.pool.Pool`). ``backend``: grade
    elsewhere instead (``grader.batch.distributed.DaskBackend``: a cluster); ``jobs`` and ``launcher``
    then do not apply. The backend is closed when the batch ends."""
    if backend is None:
        backend = LocalBackend(jobs, launcher)
    elif jobs is not None or launcher is not None:
        raise ValueError("jobs and launcher are for local grading; a backend decides them itself")
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.is_dir():
        private_folder(out)
    students_dir = out / "students"
    unpacked = Path(tempfile.mkdtemp(prefix="jaxgrade-intake-"))
    try:
        intake = find_submissions(source, exercise.function, unpack_to=unpacked, skip=(out,))
        if not intake.submissions and not intake.problems:  # most likely a wrong path: touch nothing
            raise IntakeError(f"found nothing to grade in {source}: give a folder of .py files, a folder of "
                              "per-student folders, or a .zip of either")
        outcome = BatchOutcome(out=out, intake=intake)
        check_ids = [c.id for c in exercise.checks]
        todo: list[tuple[Submission, dict[str, Any]]] = []
        for submission in intake.submissions:
            key = result_key(exercise, submission.sha256, seed)
            stored = None if regrade else load_result(students_dir / student_folder(submission.student))
            if stored is not None and reusable(stored, key, submission.student):
                # The LMS's name and LATE mark are today's download's, not the stored run's.
                outcome.results[submission.student] = {**stored, "name": submission.name, "late": submission.late}
                outcome.reused.append(submission.student)
            else:
                # hidden from its child like the classmates' files: the gradebook and reports in out/
                todo.append((replace(submission, others=(*submission.others, str(out.resolve()))), key))

        saved_at = 0.0

        def save(soon: bool = False) -> None:
            """Rewrite the gradebook; with ``soon``, at most every GRADEBOOK_EVERY_S seconds (a big
            class would otherwise rewrite n rows n times; after a crash it lags by that much)."""
            nonlocal saved_at
            if soon and time.monotonic() - saved_at < GRADEBOOK_EVERY_S:
                return
            write_gradebook(out / "gradebook.csv", check_ids, outcome.results.values(), problems_of(outcome),
                            lms=intake.layout in ("canvas", "moodle"))
            saved_at = time.monotonic()

        save()
        meter = progress(len(todo)) if callable(progress) else progress
        isolation = IsolationNotice(getattr(meter, "stream", None))  # the layers missing here, said once
        try:
            if todo:
                backend.start(exercise, seed)
                pending: dict[Future[Report], tuple[Submission, dict[str, Any]]] = {}
                queue = iter(todo)

                def fill() -> None:
                    while len(pending) < backend.slots():
                        item = next(queue, None)
                        if item is None:
                            return
                        pending[backend.submit(item[0])] = item

                try:
                    fill()
                    while pending:
                        done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                        for future in done:
                            submission, key = pending.pop(future)
                            fill()
                            try:
                                report = future.result()
                            except Exception as error:  # the grader's own failure: retried next run
                                outcome.failed[submission.student] = f"{type(error).__name__}: {error}"
                                if meter:
                                    meter.update(label(submission.student, submission.name), "error", "not graded")
                                continue
                            record = _write_student(students_dir / student_folder(submission.student),
                                                    submission, report, key)
                            outcome.results[submission.student] = record
                            outcome.graded.append(submission.student)
                            isolation.report(report.environment.get("protections"))
                            save(soon=True)
                            if meter:
                                meter.update(label(submission.student, submission.name), report.status,
                                             f"{report.score:g}/{report.max_score:g}")
                except KeyboardInterrupt:
                    outcome.interrupted = True
                    for future in pending:
                        future.cancel()
                    backend.abandon()
        finally:
            backend.close()
            if meter:
                meter.close()
            save()
            write_summary(out, summary_data(exercise, seed, outcome))
        return outcome
    finally:
        shutil.rmtree(unpacked, ignore_errors=True)


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
    info = {"slug": exercise.slug, "title": exercise.title, "version": exercise.fingerprint,
            "max_score": exercise.max_score, "seed": seed, "jaxgrade": __version__}
    return summarize(outcome.results.values(), problems, exercise=info, checks=checks,
                     names=outcome.intake.names, notes=outcome.intake.notes)
