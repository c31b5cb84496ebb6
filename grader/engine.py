"""Grade one submission of one exercise: run its checks against a sandboxed child."""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import time
from pathlib import Path
from typing import Any, Callable

from grader import __version__
from grader.cache import compile_cache_directory, compile_cache_of, warmed_marker  # noqa: F401 (the first: callers' name for it)
from grader.checks.base import Check, Context
from grader.checks.divergence import divergence_outcome
from grader.checks.values import ValueProperty, answer_on
from grader.errors import Malformed, SandboxError
from grader.authoring.exercise import Exercise, hidden_from_child
from grader.observe.session import Session
from grader.outcome import Outcome
from grader.report.result import CheckResult, Report
from grader.report.safe_text import for_shell
from grader.sandbox.limits import Limits
from grader.sandbox.process import ChildProcess, Launcher
from grader.timings import Timings

# Checks run in this order (load first: nothing else can run without it; structure after the
# value checks, so it can compare every call they made; limits last: it reads the incidents
# of all the others). Reports list them in the exercise's own order.
RUN_ORDER = ("load", "type", "value", "structure", "limits")
# A check's time budget is at least this many times what the reference solution needed for
# it on this machine: a correct student solution may be unjitted, or run shard_map eagerly.
REFERENCE_FACTOR = 20.0


def _run_order(exercise: Exercise) -> Callable[[Check], tuple[bool, bool, int]]:
    """Checks shown to students run before those withheld (the limits check last of all): a
    submission that keeps the inputs it is called on cannot carry a withheld check's into a
    shown check's message, as none is called after them."""
    def key(check: Check) -> tuple[bool, bool, int]:
        return (check.category == "limits", check.category != "load" and exercise.visibility_of(check.id) != "visible",
                RUN_ORDER.index(check.category))
    return key


def _result(check: Check, points: float, outcome: Outcome, visibility: str = "visible",
            duration_s: float = 0.0) -> CheckResult:
    return CheckResult(id=check.id, title=check.title, category=check.category, status=outcome.status,
                       score=round(points * outcome.fraction, 6), max_score=points, message=outcome.message,
                       hint=check.hint if outcome.status == "failed" and outcome.hint_applies else None,
                       counterexample=outcome.counterexample, expected=outcome.expected, observed=outcome.observed,
                       reproduce=outcome.reproduce, advisory=outcome.advisory, visibility=visibility,
                       duration_s=round(duration_s, 6), expected_layout=outcome.expected_layout,
                       observed_layout=outcome.observed_layout)


def _judge(check: Check, context: Context) -> Outcome:
    try:
        return check.judge(context)
    except Malformed as error:  # what the submission's process sent, read while judging: its doing
        return Outcome.failed(f"Your submission's process broke the grading channel: it sent malformed data "
                              f"({error}). Leave the process's inherited file descriptors alone.")
    except SandboxError:
        raise  # the grader's environment failed: the whole submission is ungraded (grade() below)
    except Exception as error:  # a bug in the grader or the exercise, never the student's fault
        return Outcome("error", f"The grader failed on this check ({type(error).__name__}: {error}). "
                                "This is not your fault: report it to your instructor.")


def _fails_under_every_seed(check: Check, context: Context, budget_s: float) -> bool:
    """Whether ``check``, failed just now, would fail under any other seed as well: it is judged
    once, or it still fails when judged again on what the grading observed before it drew from
    its seed (the probe's call and trace, the calls and incidents of then; ``draw`` gives no
    input), which every seed's grading observes alike. More observations only add evidence
    against a submission (another call placed differently, more host work, an input the
    result does not follow), never take a failure away, so that failure holds whatever a seed
    draws. Checks judged on drawn inputs (value properties) pass there and settle nothing."""
    if check.judged_once:
        return True
    session = context.session
    with session.without_seeded(), session.budget(budget_s):
        return _judge(check, dataclasses.replace(context, draws=False)).status == "failed"


def warm_compile_cache(exercise: Exercise, launcher: Launcher | None = None) -> str | None:
    """The compilation cache directory, filled from the exercise's reference solution the
    first time this exercise (at this version of its files) is graded here (its child
    started by ``launcher``, as in :func:`grade`). That grading's time per check is kept next
    to it (see :func:`check_budgets`). None without the exercise's answer key (a student's
    install): nothing trusted to fill it from, and a submission's child only reads it."""
    if not exercise.has_key:
        return None
    directory, marker = compile_cache_of(exercise.slug, exercise.fingerprint)
    if marker is not None:  # not filled yet
        # The reference is trusted and must write the cache, which confined children only read.
        report = grade(exercise, exercise.reference, compile_cache=directory,
                       limits=dataclasses.replace(exercise.limits, confine=False), launcher=launcher)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({c.id: c.duration_s for c in report.checks}))
    return directory


# The variants whose gradings fill the cache for failing submissions: a load mistake compiles
# nothing, and a limits one waits out a limit or crashes by design.
WARMING_CATEGORIES = ("type", "value", "structure")
# Submissions graded per warming variant before filling the cache from the variants repays it.
# Measured on the seed exercise (48 warming variants, 2 cores): the variants' gradings cost 9.5 s
# of a cold class run (they compile everything, unconfined), and what they add to the cache saves
# a wrong submission 60-95 ms of compiling (33 submissions, 17 wrong: 0.5-0.8 s of the class run):
# even with every submission wrong, 5-6 per variant before it pays; with a class's 70% wrong, ~8.
VARIANT_PAYBACK = 8


def warming_variants(exercise: Exercise) -> list[Path]:
    """The right/ and wrong/ variants whose gradings fill the cache (see WARMING_CATEGORIES)."""
    paths = [v.path for v in exercise.variants("right")]
    return paths + [v.path for v in exercise.variants("wrong") if v.expect in WARMING_CATEGORIES]


def variants_repay(exercise: Exercise, submissions: int) -> bool:
    """Whether filling the cache from the variants repays its cost in a run grading
    ``submissions``: VARIANT_PAYBACK of them per warming variant (once filled, it is not done again)."""
    return submissions >= VARIANT_PAYBACK * len(warming_variants(exercise))


def warm_compile_cache_from_variants(exercise: Exercise, directory: str, workers: int = 2,
                                     launcher: Launcher | None = None) -> None:
    """Add to the cache in ``directory`` what the exercise's right/ and wrong/ variants compile,
    once per version of the exercise: a class is mostly wrong answers, and a submission that
    compiles what a known mistake compiles (a mesh over all devices, a mean, a slice and the
    sum of its shorter result, at every input shape) then reads it from the cache instead of
    compiling it. The variants are the instructor's code, like the reference, and must write
    the cache. Their children start by ``launcher`` (default: forked from a pool of its own)."""
    from concurrent.futures import ThreadPoolExecutor

    from grader.sandbox.pool import Pool
    marker = warmed_marker(exercise.slug, exercise.fingerprint, "variants")
    if marker is None or marker.exists():
        return
    paths = warming_variants(exercise)
    limits = dataclasses.replace(exercise.limits, confine=False)
    with contextlib.ExitStack() as stack, \
            ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="jaxgrade-warm") as threads:
        start = launcher or stack.enter_context(Pool()).launch
        list(threads.map(lambda path: grade(exercise, path, compile_cache=directory, limits=limits,
                                            launcher=start), paths))
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(sorted(str(path.relative_to(exercise.directory)) for path in paths)))


def check_budgets(exercise: Exercise) -> dict[str, float]:
    """Each check's time budget: the exercise's ``check_s``, or REFERENCE_FACTOR times what the
    reference needed for the check on this machine, whichever is more."""
    marker = warmed_marker(exercise.slug, exercise.fingerprint)
    try:
        measured = json.loads(marker.read_text()) if marker is not None else {}
    except (OSError, ValueError):
        measured = {}
    floor = exercise.limits.check_s
    return {check_id: max(floor, float(math.ceil(REFERENCE_FACTOR * float(measured.get(check_id) or 0.0))))
            for check_id in exercise.points}


def grade(exercise: Exercise, submission: Path, *, seed: int = 0, limits: Limits | None = None,
          display_path: str | None = None, compile_cache: str | None | bool = True,
          launcher: Launcher | None = None, hide: tuple[str, ...] = (), helpers: tuple[Path, ...] = (),
          notes: tuple[str, ...] = (), timings: Timings | None = None, early: ChildProcess | None = None) -> Report:
    """Grade ``submission`` against ``exercise``. Never raises for anything the submission does
    (an exercise that is broken raises ExerciseError: that is the author's to fix).

    ``compile_cache``: True uses (and first fills) the shared cache; a path uses that
    directory as it is; False or None compiles everything afresh. ``launcher``: how the
    submission's child starts (None: exec'd; ``grader.sandbox.pool.Pool().launch``: forked warm).
    ``hide``: folders the child must not see besides the submission's own (other students').
    ``helpers``: the submission's other modules, importable beside it (``grader.source``);
    ``notes``: what preparing it changed (a notebook's IPython lines), said in the report.
    ``timings``: filled with where the grading's time goes (JAXGRADE_TIMINGS=1; never in the report).
    ``early``: a child already started for this grading (``jaxgrade check`` spawns it before its
    own imports: grader.cli); used as the first child when it was launched exactly as the
    grading launches its own, else closed unused. The grading closes it; the caller closes it too
    should ``grade`` raise first (closing twice is harmless)."""
    return grade_seeds(exercise, submission, (seed,), limits=limits, display_path=display_path,
                       compile_cache=compile_cache, launcher=launcher, hide=hide, helpers=helpers, notes=notes,
                       timings=timings, early=early)[0]


def grade_seeds(exercise: Exercise, submission: Path, seeds: tuple[int, ...], *, limits: Limits | None = None,
                display_path: str | None = None, compile_cache: str | None | bool = True,
                launcher: Launcher | None = None, hide: tuple[str, ...] = (), helpers: tuple[Path, ...] = (),
                notes: tuple[str, ...] = (), shrink_every_seed: bool = True,
                settled_by: str | None = None,
                hand_off: Callable[[float, tuple[int, ...]], tuple[int, ...]] | None = None,
                timings: Timings | None = None, early: ChildProcess | None = None) -> list[Report]:
    """``grade`` under each of ``seeds``, one report each, in one child: the file is imported
    once, and each later seed's checks start afresh (their own calls, incidents and time
    limit) in the same process. A check that is ``judged_once`` (its calls do not depend on
    the seed, and what earlier calls compiled would hide what it counts) keeps its first
    verdict, as the load check does. What validation grades many times costs one child.
    ``shrink_every_seed=False``: after the first seed, a failing property check names its
    first failing input unshrunk (same verdict and score; a shrink is most of what grading a
    wrong answer costs the grading process).
    ``settled_by`` (a category): once a check of it has failed under the first seed in a way no
    seed can change (``_fails_under_every_seed``: judged once, or failing on what every seed
    observes alike), the later seeds are not graded and the list stops there: each of them would
    keep a failure of that category, so what validation asks of a wrong variant ("fails a
    check of its category") is already settled.
    ``hand_off``: called after the first seed with its seconds and the seeds left; the seeds it
    returns are graded elsewhere (validation gives a long variant's later seeds to another
    child), and the list has no report for them. ``early``: as in ``grade``."""
    started = time.monotonic()
    cache = warm_compile_cache(exercise) if compile_cache is True else (compile_cache or None)
    submission = Path(submission)
    shown = display_path or str(submission)
    try:
        sha256 = hashlib.sha256(submission.read_bytes()).hexdigest()
    except OSError:
        sha256 = None
    # The child sees neither the exercises (references, checks) nor the other students' folders. Its
    # parameters are named once it has started: the signature comes from the exercise's checks
    # module, whose import (Hypothesis) would otherwise delay the child's start by ~0.15 s.
    session = Session(submission, exercise.function, (), exercise.devices, limits or exercise.limits,
                      cache, launcher, (*hidden_from_child(exercise), *hide), helpers, early)
    session.timings = timings
    if timings is not None:
        timings.devices = exercise.devices
    module = submission.stem if submission.stem.isidentifier() else "submission"
    budgets = check_budgets(exercise)
    graded: list[tuple[int, dict[str, CheckResult], float]] = []  # (seed, results, seconds) per seed
    not_loaded = Outcome.skipped("Skipped: your file could not be loaded (see the load check).")
    checks: list[Check] = []
    results: dict[str, CheckResult] = {}
    handed: set[int] = set()  # seeds hand_off gave to another child
    try:
        session.start()  # JAX imports in the child while the checks load and draw their inputs here
        signature = exercise.signature
        session.parameters, session.factory = signature.names, signature.factory
        checks = exercise.checks
        run_order = _run_order(exercise)
        values = next((c for c in checks if isinstance(c, ValueProperty)), None)
        if values is not None:  # the witness's recomputation agrees with a call as a value check would
            session.tolerance = lambda arguments: _tolerance(values, arguments)
        pending = list(seeds)
        while pending:
            seed = pending.pop(0)
            first, results, seed_started = not graded, {}, time.monotonic()
            if not first:
                session.begin_grading()
            context = Context(session, signature, exercise.probe, seed, exercise.function, module, exercise.devices,
                              notes, values, shrink=first or shrink_every_seed)

            def run(check: Check, outcome: Outcome | None = None) -> None:
                started_check = time.monotonic()
                if timings is not None and first:
                    timings.begin(check.id)
                if outcome is None:
                    session.withheld = exercise.visibility_of(check.id) != "visible"
                    try:
                        with session.budget(budgets[check.id]):
                            outcome = _judge(check, context)
                    finally:
                        session.withheld = False
                results[check.id] = _result(check, exercise.points[check.id], outcome,
                                            exercise.visibility_of(check.id), time.monotonic() - started_check)
                if timings is not None and first:
                    timings.end(check.id)

            for check in checks:
                check.prepare(seed, signature)
            loaded = None
            for check in sorted(checks, key=run_order):
                if not first and (check.category == "load" or check.judged_once):
                    results[check.id] = graded[0][1][check.id]
                    loaded = session.load() if check.category == "load" else loaded
                elif check.category == "load":
                    run(check)
                    loaded = session.load()
                elif check.category != "limits":
                    run(check, not_loaded if loaded is not None and not loaded.ok else None)
                else:  # the incidents every other check ran into
                    run(check, not_loaded if loaded is not None and not loaded.ok and not session.incidents else None)
            session.settle_all()  # the probe's account, if no check judging structure asked for it
            override = _structure_override(session)
            for check in checks:  # whichever request found it, the structure checks' own included
                if override is not None and check.category == "structure" and results[check.id].status != "skipped":
                    results[check.id] = _result(check, exercise.points[check.id], override,
                                                exercise.visibility_of(check.id), results[check.id].duration_s)
            graded.append((seed, results, time.monotonic() - (started if first else seed_started)))
            if first and settled_by is not None and any(
                    c.category == settled_by and results[c.id].status == "failed"
                    and _fails_under_every_seed(c, context, budgets[c.id]) for c in checks):
                break
            if first and hand_off is not None and pending:
                handed.update(hand_off(graded[0][2], tuple(pending)))
                pending = [s for s in pending if s not in handed]
    except SandboxError as error:  # the grader's environment failed, not the submission
        checks = checks or exercise.checks
        broken = Outcome("error", f"The sandbox could not be set up, so nothing was graded ({error}). This is not "
                                  "your fault: tell whoever runs the grader.")
        # every check under every seed, those already judged too: the submission as a whole is ungraded
        results = {check.id: _result(check, exercise.points[check.id], broken, exercise.visibility_of(check.id))
                   for check in checks}
        graded = [(seed, results, time.monotonic() - started) for seed in seeds if seed not in handed]
    finally:
        if timings is not None:
            timings.mark("closing")
        output = session.close()
        if timings is not None:
            timings.mark("closed")
    return [_report(exercise, checks, found, seed, seconds, shown, sha256, session, output)
            for seed, found, seconds in graded]


def _tolerance(values: ValueProperty, arguments: Any) -> Any:
    """The value check's tolerance on ``arguments``, or None where its oracle does not take them."""
    try:
        return answer_on(values, arguments)[1]
    except Exception:  # noqa: BLE001 (an oracle that refuses some input: the witness's own bound then)
        return None


def _structure_override(session: Session) -> Outcome | None:
    """What every structure check reports instead of its own outcome: the witness's divergence
    (whichever call's account it was) fails them all."""
    verdict = session.witnessed
    return divergence_outcome(verdict.detail) if verdict is not None and verdict.status == "diverged" else None


def _report(exercise: Exercise, checks: list[Check], results: dict[str, CheckResult], seed: int, seconds: float,
            shown: str, sha256: str | None, session: Session, output: dict[str, Any]) -> Report:
    ordered = tuple(results[c.id] for c in checks)
    graded_at_all = any(r.status in ("passed", "failed") for r in ordered)
    score, max_score = sum(r.score for r in ordered), sum(r.max_score for r in ordered)
    status = "error" if not graded_at_all else ("passed" if abs(score - max_score) < 1e-9 else "failed")
    environment = {"jaxgrade": __version__, "jax": session.environment.get("jax"),
                   "platform": session.environment.get("platform"), "devices": exercise.devices, "seed": seed,
                   "protections": session.environment.get("protections", {})}
    command = f"jaxgrade check {for_shell(shown)} -e {exercise.slug} --seed {seed}"
    return Report(exercise=exercise.slug, title=exercise.title, status=status, checks=ordered,
                  submission={"path": shown, "sha256": sha256}, environment=environment,
                  duration_s=seconds, command=command, output=output)
