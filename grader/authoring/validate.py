"""``jaxgrade validate``: prove an exercise's checks before students see it.

For every exercise: everything the catalogue requires of an exercise holds
(``grader.authoring.lint.exercise_problems``: a signature, a probe and checks that fit together,
enough structure checks and known-wrong variants, a statement with its sections;
docs/authoring.md lists them); the reference and every ``right/*.py`` get full marks; every ``wrong/*.py`` fails at
least one check of the category its first line declares (and so gets less than full marks);
no check ever reports a grader error; all of it under several seeds, because a property
check that passes by luck on one seed is flaky on another; and the reference grades within
the exercise's time budget (``limits.total_s``).

Every verdict comes from ``grader.engine.grade``, the same path students go through, each
grading in its own sandboxed child. As in ``jaxgrade grade`` (``grader.batch.run``), the children
are forked from a warm process that imported JAX once (``grader.sandbox.pool``), a few gradings run
side by side in threads, and each exercise's compilation cache and its first seed's
Hypothesis inputs are prepared once, before any grading starts (the later seeds' inputs are
drawn while the first is graded). A variant's later seeds name a failing input unshrunk: a
verdict needs no smallest counterexample, and a wrong variant whose first seed fails a check of its
category in a way no seed can change (judged once, or failing on what every seed observes
alike) is not graded under the later seeds at all (``run_jobs``).
``jaxgrade list`` lives here too: it reads the same catalogue.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from grader.errors import ExerciseError, ExitCode
from grader.authoring.exercise import Exercise, all_exercises, find_exercise, own_exercises, require_key
from grader.authoring.lint import exercise_problems
from grader.report.result import Report
from grader.authoring.validated import Verdicts, verdicts_folder

if TYPE_CHECKING:
    from grader.sandbox.pool import Pool

SEEDS = (0, 1, 2, 3, 4)
# A variant whose first seed took this long grades half of its later seeds in another child,
# beside it: one long variant (an eager shard_map step: ~11 s a seed) would otherwise keep a
# core busy long after the other has finished. Most variants take 0.1-0.7 s a seed, and a
# child costs ~0.3 s to start.
HAND_OFF_AFTER_S = 2.0
FULL_MARKS = "full marks"


@dataclass(frozen=True)
class Job:
    """One grading to run: a variant of an exercise under one seed."""
    directory: str
    path: str
    name: str  # "reference", "right/x.py", "wrong/y.py"
    expect: str  # FULL_MARKS or the category a wrong variant must fail
    seed: int


@dataclass(frozen=True)
class Verdict:
    job: Job
    problem: str | None  # None: the variant behaved as declared under this seed
    score: float
    max_score: float
    duration_s: float
    failed_categories: tuple[str, ...]
    reused: bool = False  # kept from an earlier run (grader.authoring.validated): nothing it reads changed
    settled: bool = False  # not graded: the first seed's failure, which no seed can change, stands (run_jobs)


@dataclass
class VariantResult:
    name: str
    expect: str
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.verdicts) and all(v.problem is None for v in self.verdicts)

    @property
    def failed_categories(self) -> set[str]:
        """Categories with a failed check under every seed (what the variant reliably trips)."""
        sets = [set(v.failed_categories) for v in self.verdicts]
        return set.intersection(*sets) if sets else set()


@dataclass
class ExerciseValidation:
    slug: str
    variants: list[VariantResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # the exercise itself is broken
    requirements: list[str] = field(default_factory=list)  # what the catalogue requires and is missing

    @property
    def ok(self) -> bool:
        return not self.errors and not self.requirements and all(v.ok for v in self.variants)


def judge(job: Job, report: Report, budget_s: float) -> str | None:
    """Did the variant behave as declared? None if so, else what went wrong."""
    broken = [c for c in report.checks if c.status == "error"]
    if broken:
        return f"grader error in {broken[0].id}: {broken[0].message}"
    full = abs(report.score - report.max_score) < 1e-9
    if job.expect == FULL_MARKS:
        if not full:
            lost = [c for c in report.checks if c.score < c.max_score]
            return "lost points on " + "; ".join(f"{c.id} ({c.status}): {c.message[:160]}" for c in lost)
        if job.name == "reference" and report.duration_s > budget_s:
            return f"grading took {report.duration_s:.1f} s, over the exercise's budget of {budget_s:g} s"
        return None
    if not any(c.category == job.expect and c.status == "failed" for c in report.checks):
        failed = sorted({c.category for c in report.checks if c.status == "failed"}) or ["nothing"]
        return f"declared '{job.expect}' but no {job.expect} check failed (failed: {', '.join(failed)})"
    if full:
        return "got full marks"
    return None


def run_jobs(jobs: list[Job], exercise: Exercise, launcher: Callable[..., Any] | None = None,
             compile_cache: str | bool = True, hand_off: Callable[[list[Job]], None] | None = None) -> list[Verdict]:
    """Grade one variant under the seeds of ``jobs`` (all of that variant), in one child
    (``grader.engine.grade_seeds``); never raises for what the variant does. ``launcher`` and
    ``compile_cache`` mean what they mean to ``grader.engine.grade``. ``hand_off``: when the
    first seed took HAND_OFF_AFTER_S or more and two seeds or more are left, the later half of
    them is given to it (to grade in another child, beside this one) and left out here.

    A wrong variant whose first seed fails a check of its declared category in a way no seed
    can change (``grader.engine.grade_seeds(settled_by=...)``: judged once, as ``CompilesAtMost``
    is, or failing again on what every seed observes alike, such as nothing placed on the probe
    or a time-out there) keeps a failure of that category under every later seed, so its
    verdict cannot change there: those seeds are not graded, and their
    verdicts are the first one's, marked ``settled``. What they would still have shown is a
    grader error in the variant's other checks on those seeds' inputs; the reference and the
    right/ variants are graded on the same inputs under every seed."""
    from grader.engine import grade_seeds

    started, job = time.monotonic(), jobs[0]
    handed: list[Job] = []

    def give(seconds: float, left: tuple[int, ...]) -> tuple[int, ...]:
        if hand_off is None or seconds < HAND_OFF_AFTER_S or len(left) < 2:
            return ()
        handed.extend(j for j in jobs if j.seed in left[len(left) // 2:])
        hand_off(list(handed))
        return tuple(j.seed for j in handed)

    try:
        # A verdict needs no smallest counterexample: the first seed's is shrunk, later seeds name
        # the input that failed (`jaxgrade check --seed N` shrinks it).
        reports = grade_seeds(exercise, Path(job.path), tuple(j.seed for j in jobs), display_path=job.name,
                              compile_cache=compile_cache, launcher=launcher, shrink_every_seed=False,
                              settled_by=None if job.expect == FULL_MARKS else job.expect, hand_off=give)
    except Exception as error:  # a broken exercise (checks.py raising) must not stop the others
        return [Verdict(j, f"grading raised {type(error).__name__}: {error}", 0.0, exercise.max_score,
                        time.monotonic() - started, ()) for j in jobs if j not in handed]
    jobs = [j for j in jobs if j not in handed]
    verdicts = []
    for one, report in zip(jobs, reports):
        failed = tuple(sorted({c.category for c in report.checks if c.status == "failed"}))
        verdicts.append(Verdict(one, judge(one, report, exercise.limits.total_s), report.score, report.max_score,
                                report.duration_s, failed))
    last = verdicts[-1]
    verdicts += [Verdict(one, last.problem, last.score, last.max_score, 0.0, last.failed_categories, settled=True)
                 for one in jobs[len(reports):]]
    return verdicts


def jobs_for(exercise: Exercise, seeds: Sequence[int], variant_seeds: Sequence[int]) -> list[Job]:
    """Every grading validation needs; raises ExerciseError for a malformed exercise."""
    require_key([exercise], "validating")
    exercise.checks, exercise.probe  # noqa: B018 — loads checks.py, matches ids and fits the probe
    directory = str(exercise.directory)
    if not exercise.variants("wrong"):
        raise ExerciseError(f"{exercise.slug}: no known-wrong variants in wrong/: add at least one whose first "
                            "line is '# expect: CATEGORY'")
    jobs = [Job(directory, str(exercise.reference), "reference", FULL_MARKS, s) for s in seeds]
    for kind in ("right", "wrong"):
        for variant in exercise.variants(kind):
            name = f"{kind}/{variant.path.name}"
            expect = variant.expect or FULL_MARKS
            jobs.extend(Job(directory, str(variant.path), name, expect, s) for s in variant_seeds)
    return jobs


def validated_seeds(exercise: Exercise, seeds: Sequence[int] = SEEDS) -> int:
    """How many of ``seeds``, from the first, ``exercise`` is validated under on this machine with
    this grader and this JAX: every grading validation makes under each has a kept verdict (only
    verdicts that held are kept, ``grader.authoring.validated``). 0 when the cache is off, the exercise
    is malformed, or its first seed was never validated here."""
    folder = verdicts_folder()
    if folder is None:
        return 0
    try:
        jobs = jobs_for(exercise, seeds, seeds)
    except Exception:  # a malformed exercise, or checks.py fails to import: not validated
        return 0
    store = Verdicts(exercise, folder)
    held = 0
    for seed in seeds:
        if not all(store.get(store.key(j.path, j.name, j.expect, j.seed)) is not None for j in jobs if j.seed == seed):
            break
        held += 1
    return held


def validate(exercises: Iterable[Exercise], seeds: Sequence[int] = SEEDS, variant_seeds: Sequence[int] | None = None,
             workers: int = 2, progress: Callable[[Verdict], None] | None = None,
             reuse: bool = False) -> list[ExerciseValidation]:
    """Validate ``exercises``: the reference under ``seeds``, the variants under
    ``variant_seeds`` (the same seeds unless given). ``workers`` gradings run at once.
    ``reuse``: a grading nothing it reads changed in since a run that kept its verdict is not
    run again (``grader.authoring.validated``); the new verdicts are kept."""
    variant_seeds = seeds if variant_seeds is None else variant_seeds
    results: dict[str, ExerciseValidation] = {}
    jobs: list[Job] = []
    loaded: dict[str, Exercise] = {}
    stores: dict[str, Verdicts] = {}
    folder = verdicts_folder() if reuse else None
    for exercise in exercises:
        result = results[exercise.directory.as_posix()] = ExerciseValidation(exercise.slug)
        loaded[str(exercise.directory)] = exercise
        try:
            jobs.extend(jobs_for(exercise, seeds, variant_seeds))
            if folder is not None:
                stores[str(exercise.directory)] = Verdicts(exercise, folder)
        except ExerciseError as error:
            result.errors.append(str(error))
        except Exception as error:  # checks.py itself fails to import
            result.errors.append(f"checks.py failed to load: {type(error).__name__}: {error}")
    keys = {job: stores[job.directory].key(job.path, job.name, job.expect, job.seed)
            for job in jobs if job.directory in stores}
    verdicts, pending = [], []
    for job in jobs:
        kept = stores[job.directory].get(keys[job]) if job in keys else None
        if kept is None:
            pending.append(job)
        else:
            verdicts.append(Verdict(job, None, float(kept["score"]), float(kept["max_score"]),
                                    float(kept["duration_s"]), tuple(kept["failed_categories"]), reused=True,
                                    settled=kept.get("settled") is True))
            if progress:
                progress(verdicts[-1])
    from grader.engine import compile_cache_directory
    from grader.sandbox.pool import Pool
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(Pool()) if pending else None
        for devices in sorted({loaded[job.directory].devices for job in pending}):
            pool.warm(devices, compile_cache_directory())  # its import of JAX overlaps what follows
        for directory, exercise in loaded.items():  # (draws the first seed's inputs)
            results[Path(directory).as_posix()].requirements = exercise_problems(exercise)
        verdicts += _run(pending, loaded, workers, progress, pool) if pool is not None else []
    for verdict in verdicts:
        if verdict.job in keys and verdict.problem is None:
            stores[verdict.job.directory].keep(keys[verdict.job], {
                "score": verdict.score, "max_score": verdict.max_score, "duration_s": verdict.duration_s,
                "failed_categories": list(verdict.failed_categories), "settled": verdict.settled})
    for store in stores.values():
        store.save()
    position = {job: i for i, job in enumerate(jobs)}
    verdicts.sort(key=lambda verdict: position[verdict.job])
    for verdict in verdicts:
        result = results[Path(verdict.job.directory).as_posix()]
        found = next((v for v in result.variants if v.name == verdict.job.name), None)
        if found is None:
            found = VariantResult(verdict.job.name, verdict.job.expect)
            result.variants.append(found)
        found.verdicts.append(verdict)
    return list(results.values())


def _run(jobs: list[Job], exercises: dict[str, Exercise], workers: int,
         progress: Callable[[Verdict], None] | None, pool: Pool) -> list[Verdict]:
    from grader.batch.run import prepare, prepare_checks

    verdicts: list[Verdict] = []
    first: dict[str, int] = {}  # each exercise's first seed: drawn, and its cache filled, before any grading
    later: list[tuple[str, int]] = []
    for job in jobs:
        first.setdefault(job.directory, job.seed)
        if job.seed != first[job.directory] and (job.directory, job.seed) not in later:
            later.append((job.directory, job.seed))

    def draw_later() -> None:
        for directory, seed in later:
            # a strategy that cannot draw under a seed is reported by each grading that needs it
            with contextlib.suppress(Exception):
                prepare_checks(exercises[directory], seed)

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="jaxgrade-validate") as threads:
        # The other seeds are drawn on a worker while this thread fills each exercise's cache
        # from its reference (a core that would wait otherwise); a grading that reaches a seed
        # not drawn yet waits for that draw. Validate grades the variants itself: warming the
        # cache from them first gains nothing.
        drawing = threads.submit(draw_later)
        caches = {directory: prepare(exercises[directory], seed, variants=False, launcher=pool.launch)
                  for directory, seed in first.items()}
        variants: dict[tuple[str, str, str, str], list[Job]] = {}  # each variant's seeds share one child
        for job in jobs:
            variants.setdefault((job.directory, job.path, job.name, job.expect), []).append(job)
        # At most `workers` gradings at once, taken in order; seeds a long variant hands off go
        # first, so they run beside it rather than after everything else.
        tasks = deque(variants.values())

        def run(group: list[Job]) -> list[Verdict]:
            return run_jobs(group, exercises[group[0].directory], pool.launch, caches[group[0].directory] or False,
                            hand_off=tasks.appendleft)

        running = {drawing}
        while tasks or running:
            while tasks and len(running) < max(1, workers):
                running.add(threads.submit(run, tasks.popleft()))
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                for verdict in future.result() or ():  # (the draws give None)
                    verdicts.append(verdict)
                    if progress:
                        progress(verdict)
    return verdicts


def table(results: list[ExerciseValidation]) -> str:
    """One line per variant: what it must do, under how many seeds it did, its score and time."""
    rows = [("exercise", "variant", "must", "seeds", "score", "time", "result")]
    problems = []
    for result in results:
        for error in result.errors:
            rows.append((result.slug, "-", "-", "-", "-", "-", "BROKEN"))
            problems.append(f"{result.slug}: {error}")
        for variant in result.variants:
            good = sum(v.problem is None for v in variant.verdicts)
            scores = sorted({f"{v.score:g}/{v.max_score:g}" for v in variant.verdicts})
            slowest = max(v.duration_s for v in variant.verdicts)
            must = "full marks" if variant.expect == FULL_MARKS else f"fail {variant.expect}"
            settled = "*" if any(v.settled for v in variant.verdicts) else ""
            rows.append((result.slug, variant.name, must, f"{good}/{len(variant.verdicts)}{settled}", ",".join(scores),
                         f"{slowest:.1f}s", "ok" if variant.ok else "FAIL"))
            problems.extend(f"{result.slug} {variant.name} (seed {v.job.seed}): {v.problem}"
                            for v in variant.verdicts if v.problem and not v.settled)  # a copy: said once
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    missing = [r for result in results for r in result.requirements if r not in problems]
    if any(v.settled for result in results for variant in result.variants for v in variant.verdicts):
        lines += ["", "* graded under its first seed only: it fails a check of its category on what every seed "
                      "observes alike (the probe, the fixed cases, a check judged once), so every later seed would keep "
                      "that failure."]
    if problems:
        lines += ["", "Problems:"] + [f"  {p}" for p in problems]
    if missing:
        lines += ["", "Not yet what the catalogue requires (docs/authoring.md, \"What an exercise must have\"):"]
        lines += [f"  {r}" for r in missing]
    return "\n".join(lines) + "\n"


# -- the commands -----------------------------------------------------------------------------------
def _selected(slugs: list[str]) -> list[Exercise]:
    return [find_exercise(s) for s in slugs] if slugs else own_exercises()


def _validate_command(args: argparse.Namespace) -> int:
    exercises = _selected(args.slugs)
    require_key(exercises, "jaxgrade validate")
    seeds = tuple(range(args.seeds))
    variant_seeds = tuple(range(args.variant_seeds)) if args.variant_seeds is not None else seeds
    total = sum(1 for _ in exercises)
    print(f"Validating {total} exercise(s) under seeds {list(seeds)} with {args.workers} worker(s)...",
          file=sys.stderr, flush=True)
    started = time.monotonic()
    results = validate(exercises, seeds, variant_seeds, workers=args.workers, reuse=not args.fresh,
                       progress=lambda v: print("." if v.problem is None else "F", end="", file=sys.stderr,
                                                flush=True))
    every = [v for r in results for variant in r.variants for v in variant.verdicts]
    reused = sum(v.reused for v in every)
    print(f" {time.monotonic() - started:.0f} s" + (f"; {reused} of {len(every)} gradings unchanged since an earlier "
                                                   "run, not graded again (--fresh grades them)" if reused else ""),
          file=sys.stderr)
    sys.stdout.write(table(results))
    bad = [r.slug for r in results if not r.ok]
    print(f"\n{len(results) - len(bad)}/{len(results)} exercise(s) valid" + (f"; invalid: {', '.join(bad)}" if bad else ""))
    return ExitCode.NOT_ALL if bad else ExitCode.OK


def _list_command(args: argparse.Namespace) -> int:
    """The exercises with the version a course pins (exercise.toml's) and whether their answer
    key is here: what validating, a class run or an export needs (docs/keys.md)."""
    exercises = all_exercises()
    rows = [("slug", "title", "version", "points", "devices", "key")]
    rows += [(e.slug, e.title, e.version, f"{e.max_score:g}", str(e.devices), "present" if e.has_key else "absent")
             for e in exercises]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    if not all(e.has_key for e in exercises):
        print("\nkey absent: checking works, but validate, grade and the autograder exports need the reference "
              "(docs/keys.md)")
    return ExitCode.OK


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``validate`` and ``list`` with the jaxgrade parser (called by grader.cli)."""
    check = commands.add_parser("validate", help="prove exercises' checks: reference passes, wrong variants fail")
    check.add_argument("slugs", nargs="*", metavar="SLUG", help="exercises to validate (default: all)")
    check.add_argument("--seeds", type=_positive, default=len(SEEDS), help="seeds 0..N-1 to grade under (default 5)")
    check.add_argument("--variant-seeds", type=_positive, default=None,
                       help="grade right/wrong variants under seeds 0..N-1 only (default: same as --seeds)")
    check.add_argument("--workers", type=_positive, default=2, help="gradings at once (default 2)")
    check.add_argument("--fresh", action="store_true",
                       help="grade everything again, even what nothing changed in since an earlier run")
    check.set_defaults(run=_validate_command)
    listing = commands.add_parser("list", help="list the exercises: slug, title, version, points, devices, and "
                                               "whether the answer key is here")
    listing.set_defaults(run=_list_command)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
