"""``jaxgrade grade``: the command over :func:`grader.batch.run.grade_class`.

    jaxgrade grade submissions/ -e SLUG -o out/ [-j N] [--seed N] [--regrade] [--scheduler tcp://HOST:PORT]
                   [--gradebook canvas|moodle] [--assignment "TITLE (ID)"] [--points N] [--lms-file FILE]

Everything printed here that comes from a file or folder name is escaped for the terminal
(:func:`grader.report.safe_text.for_terminal`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.batch.gradebook import GRADEBOOK_FORMATS, canvas_rows, moodle_rows, write_lms_gradebook
from grader.batch.lms_assignment import CANVAS_COLUMN, LmsAssignment, read_lms_file
from grader.batch.progress import Progress
from grader.batch.run import NO_SPACE, BatchOutcome, grade_class, problems_of
from grader.report.safe_text import for_terminal
from grader.errors import ClusterError, ExitCode, IntakeError, UsageError
from grader.report.visibility import shown_to


def _run(args: argparse.Namespace) -> int:
    from grader.child.jax_version import installed_jax, range_warning
    from grader.authoring.exercise import find_exercise

    exercise = find_exercise(args.exercise)
    source, out = Path(args.source), Path(args.output)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder; give -o a folder for the results")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("-j must be at least 1")
    target = _lms_assignment(args, exercise.title)
    warning = range_warning(installed_jax())  # a JAX outside pyproject.toml's range
    if warning:
        print(warning, file=sys.stderr)
    backend = None
    if args.scheduler:
        from grader.batch.distributed import DaskBackend
        if args.jobs is not None:
            raise UsageError("-j is for grading on this machine; on a cluster each worker grades as many at once "
                             "as its --nthreads (see docs/cluster.md)")
        backend = DaskBackend(args.scheduler)
    try:
        outcome = grade_class(exercise, source, out, jobs=args.jobs, seed=args.seed, regrade=args.regrade,
                              progress=lambda total: Progress(total), backend=backend, roster=target.roster)
    except IntakeError as error:
        raise UsageError(str(error)) from None
    except ClusterError as error:
        raise UsageError(str(error)) from None
    except OSError as error:  # no room to begin (the output folder, the unpacked download): nothing graded
        if error.errno not in NO_SPACE:
            raise
        print(for_terminal(f"jaxgrade: the grader ran out of disk space ({error.strerror}: {error.filename}), so no "
                           "student was graded: make room and run the same command again"), file=sys.stderr)
        return ExitCode.NOT_ALL
    intake = outcome.intake
    print(f"{len(outcome.graded)} graded, {len(outcome.reused)} unchanged since the last run (not regraded), "
          f"{len(intake.problems)} entr{'y' if len(intake.problems) == 1 else 'ies'} not graded"
          + (f", {len(outcome.failed)} failed in the grader (grade again to retry)" if outcome.failed else ""))
    if intake.layout in ("canvas", "moodle"):
        print(f"Read as a {intake.layout.capitalize()} download: one row per student, keyed by the "
              f"{'Canvas user id' if intake.layout == 'canvas' else 'Moodle participant id'}")
    for problem in intake.problems:
        print(for_terminal(f"  not graded: {problem.source}: {problem.reason}: {problem.message}"))
    for note in intake.notes:
        print(for_terminal(f"  note: {note}"))
    print(f"Gradebook: {for_terminal(str(outcome.gradebook))}")
    withheld = {cid for cid in exercise.points
                if not shown_to(exercise.visibility_of(cid), "student", exercise.release.stage())}
    if args.gradebook and target.points is not None:
        print(f"LMS points: each score scaled from {exercise.max_score:g} points to {target.points:g}")
    for format in dict.fromkeys(args.gradebook or ()):
        try:
            _write_lms_gradebook(format, outcome, exercise.max_score, target, withheld)
        except OSError as error:
            if error.errno not in NO_SPACE:
                raise
            outcome.out_of_space = outcome.out_of_space or f"{error.strerror} in {out}"
            outcome.unsaved.append(str(out / f"gradebook-{format}.csv"))
    print(f"Summary:   {for_terminal(str(outcome.summary))}  (and {for_terminal(str(out / 'summary.md'))})")
    if outcome.out_of_space:  # one line: what ran short, who is not graded, what to do
        unsaved = f"; not written: {', '.join(outcome.unsaved)}" if outcome.unsaved else ""
        print(for_terminal(f"jaxgrade: the grader ran out of disk space ({outcome.out_of_space}): {len(outcome.failed)} "
                           f"student(s) not graded, the others graded{unsaved}; make room and run the same command "
                           "again to grade the rest"), file=sys.stderr)
    if outcome.interrupted:
        print("jaxgrade: interrupted; every finished result is saved. Run the same command again to continue.",
              file=sys.stderr)
        return ExitCode.INTERRUPTED
    from grader.dependencies import needed_package_in
    needed = next(filter(None, map(needed_package_in, dict.fromkeys(outcome.failed.values()))), None)
    if needed:  # the grader's processes could not import what they need: an install to fix, then grade again
        print(needed, file=sys.stderr)
        return ExitCode.UNGRADABLE
    return ExitCode.NOT_ALL if outcome.failed or outcome.unsaved else ExitCode.OK


def _lms_assignment(args: argparse.Namespace, title: str) -> LmsAssignment:
    """The LMS assignment's column and points, from --assignment, --points and --lms-file
    (checked before grading, so a bad flag costs no grading). Points None: the scores as graded."""
    if (args.points is not None or args.lms_file is not None) and not args.gradebook:
        raise UsageError("--points and --lms-file are for the LMS gradebooks: add --gradebook canvas or moodle")
    if args.points is not None and not 0 < args.points < float("inf"):
        raise UsageError("--points must be a number above 0 (the LMS assignment's points)")
    if args.lms_file is not None:
        found = read_lms_file(Path(args.lms_file), args.assignment, title)
        if args.points is not None and args.points != found.points:
            raise UsageError(f"--points {args.points:g} disagrees with the {found.points:g} points of "
                             f"{args.lms_file}; give one of them")
        return LmsAssignment(found.points, found.column or title, found.roster)
    assignment = args.assignment or title
    if assignment.isdigit():  # an id alone: the column Canvas's own export would name
        assignment = f"{title} ({assignment})"
    return LmsAssignment(args.points, assignment)


def _write_lms_gradebook(format: str, outcome: BatchOutcome, max_score: float, target: LmsAssignment,
                         withheld: set[str]) -> None:
    """``gradebook-canvas.csv`` or ``gradebook-moodle.csv`` beside gradebook.csv; a line on
    stderr where the download cannot give the LMS what it matches students by, or where the
    Canvas column has no assignment id."""
    intake, path = outcome.intake, outcome.out / f"gradebook-{format}.csv"
    results, problems = outcome.results.values(), problems_of(outcome)
    points, column = target.points, target.column or ""
    if format == "canvas":
        header, rows = canvas_rows(column, max_score, results, problems, intake.layout, points)
        write_lms_gradebook(path, header, rows)
        print(f"Canvas:    {for_terminal(str(path))}  (Grades > Import; assignment column {for_terminal(column)!r})")
        if not CANVAS_COLUMN.fullmatch(column):
            print("jaxgrade: the Canvas column has no assignment id, so Canvas matches it by title and creates a new "
                  "assignment when none has that title; give --assignment 'Title (ID)' (or the id alone), or "
                  "--lms-file with Canvas's gradebook export", file=sys.stderr)
        if intake.layout != "canvas":
            print("jaxgrade: this is not a Canvas download, so gradebook-canvas.csv has no Canvas user ids: Canvas "
                  "will match students by the SIS Login ID column (the student names here) and ask about the rest",
                  file=sys.stderr)
        return
    header, rows = moodle_rows(max_score, results, problems, intake.layout, points, withheld)
    if not rows:
        print("jaxgrade: not a Moodle download (no participant ids in its names), so no Moodle grading worksheet "
              "was written; download the submissions from the Moodle assignment and grade that, or import "
              "gradebook.csv by hand", file=sys.stderr)
        return
    write_lms_gradebook(path, header, rows)
    print(f"Moodle:    {for_terminal(str(path))}  (the assignment's Upload grading worksheet)")


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
    grade.add_argument("--gradebook", action="append", choices=GRADEBOOK_FORMATS, metavar="canvas|moodle",
                       help="also write the CSV that Canvas's grade import or Moodle's grading worksheet upload "
                            "reads (gradebook-canvas.csv, gradebook-moodle.csv); gradebook.csv is always written")
    grade.add_argument("--assignment", metavar="'TITLE (ID)'", default=None,
                       help="the assignment column of gradebook-canvas.csv, as Canvas's own export names it, e.g. "
                            "'Lab 3 (98765)', or the assignment id alone (default: the exercise's title); "
                            "with --lms-file, the assignment's title or id there")
    grade.add_argument("--points", type=float, default=None, metavar="N",
                       help="the LMS assignment's points: gradebook-canvas.csv and gradebook-moodle.csv give each "
                            "score out of N (default: the exercise's points; Moodle skips a grade above its maximum)")
    grade.add_argument("--lms-file", metavar="FILE", default=None,
                       help="Canvas's gradebook export or the Moodle assignment's grading worksheet: the assignment's "
                            "points (and Canvas's column with its id) are read from it, and the download's ids "
                            "and names are checked against its students: an id it does not list, or two names "
                            "claiming one id, is flagged for review")
    grade.set_defaults(run=_run)
