"""``jaxgrade grade``: the command over :func:`grader.batch.run.grade_class`.

    jaxgrade grade submissions/ -e SLUG -o out/ [-j N] [--seed N] [--regrade] [--scheduler tcp://HOST:PORT]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.batch.run import Progress, grade_class
from grader.errors import ClusterError, IntakeError, UsageError


def _run(args: argparse.Namespace) -> int:
    from grader.exercise import find_exercise

    exercise = find_exercise(args.exercise)
    source, out = Path(args.source), Path(args.output)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder; give -o a folder for the results")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("-j must be at least 1")
    backend = None
    if args.scheduler:
        from grader.batch.distributed import DaskBackend
        if args.jobs is not None:
            raise UsageError("-j is for grading on this machine; on a cluster each worker grades as many at once "
                             "as its --nthreads (see docs/cluster.md)")
        backend = DaskBackend(args.scheduler)
    try:
        outcome = grade_class(exercise, source, out, jobs=args.jobs, seed=args.seed, regrade=args.regrade,
                              progress=lambda total: Progress(total), backend=backend)
    except IntakeError as error:
        raise UsageError(str(error)) from None
    except ClusterError as error:
        raise UsageError(str(error)) from None
    intake = outcome.intake
    print(f"{len(outcome.graded)} graded, {len(outcome.reused)} unchanged since the last run (not regraded), "
          f"{len(intake.problems)} entr{'y' if len(intake.problems) == 1 else 'ies'} not graded"
          + (f", {len(outcome.failed)} failed in the grader (grade again to retry)" if outcome.failed else ""))
    for problem in intake.problems:
        print(f"  not graded: {problem.source}: {problem.reason}: {problem.message}")
    print(f"Gradebook: {outcome.gradebook}")
    print(f"Summary:   {outcome.summary}  (and {out / 'summary.md'})")
    if outcome.interrupted:
        print("jaxgrade: interrupted; every finished result is saved. Run the same command again to continue.",
              file=sys.stderr)
        return 130
    return 1 if outcome.failed else 0


def add_grade_command(commands: argparse._SubParsersAction) -> None:
    """Register ``jaxgrade grade`` (called from grader.cli.build_parser)."""
    grade = commands.add_parser("grade", help="grade a whole class: a folder or .zip of submissions")
    grade.add_argument("source", help="a folder of .py files, a folder of per-student folders, or a .zip of either")
    grade.add_argument("-e", "--exercise", required=True, help="exercise slug")
    grade.add_argument("-o", "--output", required=True, help="folder for the gradebook, reports and summary")
    grade.add_argument("-j", "--jobs", type=int, default=None,
                       help="submissions graded at once (default: the number of CPUs)")
    grade.add_argument("--seed", type=int, default=0, help="seed for the generated inputs (default 0)")
    grade.add_argument("--regrade", action="store_true",
                       help="grade every submission again, even those unchanged since the last run")
    grade.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                       help="grade on this Dask cluster instead of this machine (see docs/cluster.md)")
    grade.set_defaults(run=_run)
