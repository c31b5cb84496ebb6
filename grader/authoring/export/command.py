"""The command line of the exports: ``jaxgrade export TARGET -e SLUG|--all -o OUT`` for gradescope,
prairielearn, student, github-classroom and gitlab-ci (registered on the CLI by
:func:`add_commands`), and ``python -m grader.authoring.export ...`` (:func:`main`), what the
exported scripts run inside their containers."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import traceback
from pathlib import Path
from typing import Any

from grader.errors import ExerciseError, ExitCode, ExportError, GraderFailure, UsageError
from grader.authoring.exercise import Exercise, all_exercises, find_exercise, require_key
from grader.authoring.export.container_grading import protect_exercise, shared_compile_cache
from grader.authoring.export.gradescope import autograde, export_gradescope
from grader.authoring.export.prairielearn import export_prairielearn, prairielearn_grade
from grader.authoring.export.proof import prove
from grader.authoring.export.repository import export_github_classroom, export_gitlab_ci
from grader.authoring.export.student import export_student


def _selected(args: argparse.Namespace) -> list[Exercise]:
    """The exercises named with -e (in order, each once), or every one with --all; for an
    autograder, each needs its key: one named without it stops the export before it writes
    anything, while --all leaves out those without theirs and says which, and where their keys are."""
    if args.all == bool(args.exercise):
        raise UsageError("name the exercises to export with -e SLUG (repeat it for several), or give --all")
    exercises = all_exercises() if args.all else [find_exercise(slug) for slug in dict.fromkeys(args.exercise)]
    if args.target not in KEYED:
        return exercises
    keyed = [e for e in exercises if e.has_key]
    if not args.all or not keyed:  # named without its key, or nothing to write: one line, where the keys are
        require_key(exercises, f"jaxgrade export {args.target}")
    if len(keyed) < len(exercises):
        try:
            require_key(exercises, f"jaxgrade export {args.target}")
        except ExerciseError as where:
            print(f"Skipped {len(exercises) - len(keyed)} exercise(s) without an answer key here: {where}")
    return keyed


def _destination(target: str, output: Path, slug: str, several: bool) -> Path:
    """``output`` itself for one exercise; for several, a folder holding one export per exercise
    (``SLUG.zip`` for Gradescope, a folder ``SLUG/`` otherwise)."""
    if not several:
        return output
    if output.suffix == ".zip":
        raise UsageError(f"{output}: exporting several exercises writes one export each into a folder; give -o a "
                         "folder")
    return output / (f"{slug}.zip" if target == "gradescope" else slug)


# The exports that grade with the exercise's answer key (the others hold what a student may see).
KEYED = ("gradescope", "prairielearn")


def _export(args: argparse.Namespace) -> int:
    if args.image and args.target != "prairielearn":
        raise ExerciseError("--image is for jaxgrade export prairielearn only")
    exercises = _selected(args)
    several = len(exercises) > 1 or args.all
    for exercise in exercises:
        output = _destination(args.target, Path(args.output), exercise.slug, several)
        try:
            print(_export_one(args.target, exercise, output, args.image))
            if args.prove:
                print(f"  Proven through it: {_proven(args.target, exercise, output)}", flush=True)
        except ExportError as error:
            raise ExerciseError(str(error)) from None
    return ExitCode.OK


def _proven(target: str, exercise: Exercise, output: Path) -> str:
    """:func:`grader.authoring.export.proof.prove`; an export that fails its proof is removed,
    so that nobody uploads it."""
    try:
        return prove(target, exercise, output)
    except ExportError as error:
        shutil.rmtree(output) if output.is_dir() else output.unlink(missing_ok=True)
        raise ExportError(f"{error}\nRemoved {output}: fix the cause and export again.") from None


def _export_one(target: str, exercise: Exercise, output: Path, image: str | None) -> str:
    """Export ``exercise`` for ``target`` to ``output``; what to do with it, in one line."""
    if target == "gradescope":
        path = export_gradescope(exercise, output)
        return (f"Wrote {path}: upload it as the autograder of a Gradescope programming assignment; "
                f"students submit {exercise.slug}.py.")
    if target == "prairielearn":
        path = export_prairielearn(exercise, output, image)
        return (f"Wrote {path}/: copy it to questions/ in your PrairieLearn course. Build and push the grader "
                f"image from {path}/image (see its Dockerfile)"
                + ("." if image else ", then set externalGradingOptions.image in info.json (or export again "
                                     "with --image ACCOUNT/NAME:TAG)."))
    if target == "github-classroom":
        path = export_github_classroom(exercise, output)
        return (f"Wrote {path}/: push it to GitHub as a template repository and use it as the starter code of a "
                f"GitHub Classroom assignment; every push is graded and its points reported to Classroom.")
    if target == "gitlab-ci":
        path = export_gitlab_ci(exercise, output)
        return (f"Wrote {path}/: push it as a GitLab project students fork; every push is graded, the "
                f"pipeline's Tests tab lists each check and the job log ends with the score.")
    path = export_student(exercise, output)
    return f"Wrote {path}/: give students this folder; they run  python check  inside it."


TARGETS = ("gradescope", "prairielearn", "student", "github-classroom", "gitlab-ci")


def add_commands(commands: Any) -> None:
    """Register ``jaxgrade export`` on the CLI's subcommand parsers."""
    export = commands.add_parser("export", help="package an exercise for Gradescope, PrairieLearn, students, "
                                                "GitHub Classroom or GitLab CI")
    export.add_argument("target", choices=TARGETS,
                        help="gradescope: an autograder .zip; prairielearn: a question folder with its external "
                             "grader; student: a folder without solutions or hidden checks; github-classroom, "
                             "gitlab-ci: that folder as a template repository whose CI job grades every push")
    export.add_argument("-e", "--exercise", action="append", default=[],
                        help="exercise slug; repeat it to export several (each into -o, a folder)")
    export.add_argument("--all", action="store_true", help="export every exercise, each into -o, a folder")
    export.add_argument("-o", "--output", required=True,
                        help="the .zip (gradescope) or a new folder; for several exercises, a folder holding "
                             "SLUG.zip (gradescope) or SLUG/ for each")
    export.add_argument("--image", help="prairielearn: the grader image's name in info.json (default: a placeholder "
                                        "to replace once you have pushed the image built from image/)")
    export.add_argument("--no-prove", dest="prove", action="store_false",
                        help="write the exports without grading the reference and a wrong variant through each "
                             "(a few seconds an export): for a catalogue just validated with this jaxgrade, when "
                             "minutes of proofs buy nothing (docs/formats.md, Exports)")
    export.set_defaults(run=_export)


def main(argv: list[str]) -> int:
    """``python -m grader.authoring.export autograde|lock|warm-cache|prairielearn-grade --root ROOT -e SLUG``: what
    Gradescope's run_autograder and setup.sh, and PrairieLearn's tests/run.sh, call."""
    parser = argparse.ArgumentParser(prog="python -m grader.authoring.export")
    parser.add_argument("action", choices=["autograde", "lock", "warm-cache", "prairielearn-grade"])
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("JAXGRADE_AUTOGRADER_ROOT", "/autograder")))
    parser.add_argument("-e", "--exercise", required=True)
    args = parser.parse_args(argv)
    if args.action == "warm-cache":
        print(f"jaxgrade: compilation cache {shared_compile_cache(find_exercise(args.exercise)) or 'off'}")
        return ExitCode.OK
    if args.action == "lock":
        try:
            print(f"jaxgrade: {protect_exercise(args.root, find_exercise(args.exercise)).detail}")
            return ExitCode.OK
        except GraderFailure as fault:
            print(f"jaxgrade: {fault}", file=sys.stderr)
            return ExitCode.UNGRADABLE
    try:
        grade_one = prairielearn_grade if args.action == "prairielearn-grade" else autograde
        return grade_one(args.root, args.exercise)
    except Exception:  # an unforeseen grader failure: no results.json, so Gradescope flags the run
        traceback.print_exc()
        return ExitCode.NOT_ALL
