"""The ``jaxgrade`` command: a thin layer over the library.

Exit codes: 0 full marks; 1 graded without full marks (load errors and limits included);
2 usage errors (no such file, unknown exercise, bad flag), with one line on stderr;
3 the submission could not be graded at all (the grader's environment failed, e.g. the
sandbox could not be set up, or a package jaxgrade needs is missing or broken: one line naming
it, grader.dependencies): the report says why, and it is never the student's fault;
4 jaxgrade itself crashed (an unexpected exception: a bug in jaxgrade), with one line on
stderr saying so and how to report it (``JAXGRADE_DEBUG=1`` adds the traceback); 141 the
reader of stdout went away (``jaxgrade list | head``), as a program killed by SIGPIPE.
"""
from __future__ import annotations

import argparse
import errno
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from grader import __version__
from grader.report.safe_text import for_terminal
from grader.errors import ExerciseError, ExitCode, RunnerFilesChanged, UsageError
from grader.authoring.course import choose_course
from grader.authoring.exercise import Exercise, find_exercise
from grader.report.formats import FORMATS
from grader.report.visibility import AUDIENCES
from grader.runner_files import Snapshot
from grader.timings import Timings, process_start
from grader.timings import wanted as timings_wanted

if TYPE_CHECKING:
    from grader.sandbox.pool import Pool
    from grader.sandbox.process import Launcher
    from grader.source import Converted


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse prints usage and exits 2; we want one line
        command = self.prog.split()[-1]  # "jaxgrade" for the top level, else the command's name
        raise UsageError(f"{message} (see jaxgrade{'' if command == 'jaxgrade' else ' ' + command} --help)")


def _check(args: argparse.Namespace) -> int:
    from grader.submission import read_submission  # the library's rule and messages (light: no engine yet)

    path = Path(args.file)
    converted = read_submission(path, args.file)
    if args.templates is not None and not args.templates.is_dir():
        raise UsageError(f"no such templates folder: {args.templates} (give a folder holding your *.j2 overrides)")
    exercise = exercise_for(args, converted)
    args.file_commands = Snapshot.take(os.environ)  # before any child starts (grader.runner_files)
    # Forked from the warm service's zygote (grader.warm.service), or from one started now: JAX
    # imports in it while this process imports the rest of the check, and the child and the
    # witness are both forked from it (one import of JAX, not one each).
    pool = None if getattr(args, "launcher", None) is not None else _early_pool(exercise)
    try:
        if pool is not None:
            args.launcher = pool.launch
        return _grade(args, path, exercise)
    finally:
        if pool is not None:
            pool.close()


def exercise_for(args: argparse.Namespace, converted: Converted) -> Exercise:
    """The exercise ``jaxgrade check`` grades the file against: ``-e``, else the one whose
    function the file defines (UsageError, saying what to do, for none or several)."""
    from grader.submission import exercise_of
    return exercise_of(converted, args.exercise, args.file)


def _early_pool(exercise: Exercise) -> Pool:
    """This check's warm process, started before the check's own imports (the engine, the checks,
    Hypothesis, Jinja2) so that its JAX import overlaps them (``grader.submission.early_pool``)."""
    from grader.submission import early_pool
    return early_pool(exercise)


def _grade(args: argparse.Namespace, path: Path, exercise: Exercise) -> int:
    """Grade ``path`` (its children forked by ``args.launcher``, if any), print the report; the exit code."""
    from grader.engine import grade
    from grader.child.jax_version import installed_jax, range_warning
    from grader.authoring.export.pack import version_warning
    from grader.report.render import deliver, score_line, wants_colour
    from grader.report.visibility import view
    from grader.sandbox.isolation import isolation_line
    from grader.submission import prepared

    for warning in (range_warning(installed_jax()),  # a JAX outside pyproject.toml's range
                    version_warning(exercise.directory)):  # an exported pack made with another JAX
        if warning:
            print(warning, file=sys.stderr)
    with prepared(path, exercise, args.file) as found:
        report = grade(exercise, found.path, seed=args.seed, display_path=found.shown, helpers=found.helpers,
                       notes=found.notes, timings=args.timings, launcher=getattr(args, "launcher", None))
    args.file_commands.verify()  # nothing of the grading wrote the runner's files: else no report at all
    isolation = isolation_line(report.environment.get("protections"))  # layers this machine lacks
    if isolation:
        print(isolation, file=sys.stderr)
    stage = exercise.release.stage()
    stream = open(args.output, "w") if args.output else sys.stdout
    if args.timings is not None:
        args.timings.mark("rendering")
    try:
        deliver(report, args.format, stream, colour=wants_colour(stream) and args.format == "text",
                templates=args.templates, audience=args.audience, stage=stage)
    finally:
        if args.output:
            stream.close()
    if args.output:  # the report went to a file: the log (a CI job's) still gets the score
        print(f"{score_line(report, audience=args.audience, stage=stage)} · report in {for_terminal(args.output)}",
              file=sys.stderr)
    if args.timings is not None:
        args.timings.mark("rendered")
        stream.flush()  # the report first, then where its time went
        args.timings.print(sys.stderr)
    if report.status == "error":
        return ExitCode.UNGRADABLE
    # Judged on what the audience may see: a student's exit code must not give away a hidden check.
    return ExitCode.OK if view(report, args.audience, stage)["status"] in ("passed", "pending") else ExitCode.NOT_ALL


def _start(args: argparse.Namespace) -> int:
    from grader.authoring.starter import starter_notebook, starter_text, write_notebook

    exercise = find_exercise(args.exercise)
    target = Path(args.output or f"{exercise.slug}.{'ipynb' if args.notebook else 'py'}")
    if target.exists() and not args.force:
        raise UsageError(f"{target} already exists; choose another name with -o or pass --force to overwrite it")
    if args.notebook:
        if target.suffix != ".ipynb":
            raise UsageError(f"a notebook is saved as .ipynb, not {target.name}; choose a name like "
                             f"-o {target.with_suffix('.ipynb').name}")
        write_notebook(starter_notebook(exercise, target.name), target)
        print(f"Wrote {target}: the task is its first cell. Save it and run its last cell to check your work.")
        return ExitCode.OK
    target.write_text(starter_text(exercise, target.name))
    print(f"Wrote {target}: the task is in its docstring. When you are done, run: jaxgrade check {target}")
    return ExitCode.OK


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The commands: ``check`` and ``start`` always, and the instructors' when ``command`` is
    one of theirs (only that one) or anything else (all: for help, and a misspelt command's
    message). A student's check imports none of the instructors' commands before its child is
    launched (~50 ms), and ``jaxgrade grade`` none of ``export``'s (~90 ms: NumPy, nbformat)."""
    parser = _Parser(prog="jaxgrade", description="Grade JAX exercises: values and structure.",
                     epilog="--course DIR, before or after the command: the course in DIR (default: the folder "
                            "holding jaxgrade.toml here or above; docs/course.md). --keys DIR: the track's "
                            "exercises with their answer keys (a checkout's exercises/), in place of the installed "
                            "track's (default: the course's keys setting; docs/keys.md)")
    parser.add_argument("--version", action="version", version=f"jaxgrade {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = commands.add_parser("check", help="grade one solution file")
    check.add_argument("file", help="your solution, a .py file or a notebook")
    check.add_argument("-e", "--exercise", help="exercise slug (default: found from the function your file defines)")
    check.add_argument("--format", choices=FORMATS, default="text",
                       help="text (default), json, md, html, gradescope, prairielearn, junit, gitlab (JUnit for "
                            "GitLab), github, or classroom (github, plus the points GitHub Classroom records); see "
                            "docs/formats.md")
    check.add_argument("--audience", choices=AUDIENCES, default="student",
                       help="student (default: hidden checks withheld) or instructor (everything)")
    check.add_argument("--templates", type=Path, metavar="DIR",
                       help="folder of *.j2 templates that replace the built-in ones")
    check.add_argument("-o", "--output", help="write the report to this file instead of stdout")
    check.add_argument("--seed", type=int, default=0, help="seed for the generated inputs (default 0)")
    check.add_argument("--no-daemon", action="store_true",
                       help="grade in this process, not through the warm grading service a check leaves running "
                            "for the next one (also JAXGRADE_NO_DAEMON=1; a CI job, CI set, never uses one)")
    check.set_defaults(run=_check)

    start = commands.add_parser("start", help="write an exercise's starter file")
    start.add_argument("exercise", help="exercise slug")
    start.add_argument("-o", "--output", help="file to write (default: SLUG.py, or SLUG.ipynb with --notebook)")
    start.add_argument("--notebook", action="store_true",
                       help="write a Jupyter notebook: the task, the starter code and a check cell")
    start.add_argument("--force", action="store_true", help="overwrite an existing file")
    start.set_defaults(run=_start)
    every = command not in (*_INSTRUCTORS, "check", "start")
    if every or command == "export":
        from grader.authoring import export  # jaxgrade export gradescope|prairielearn|student
        export.add_commands(commands)
    if every or command in ("validate", "list"):
        from grader.authoring import validate
        validate.add_commands(commands)
    if every or command in ("new", "init"):
        from grader.authoring import scaffold
        scaffold.add_commands(commands)
    if every or command == "grade":
        from grader.batch.command import add_grade_command  # jaxgrade grade: a whole class
        add_grade_command(commands)
    if every or command == "explain":
        from grader.authoring import explain  # jaxgrade explain: what the structure checks observe
        explain.add_commands(commands)
    return parser


_INSTRUCTORS = ("export", "validate", "list", "new", "init", "grade", "explain")  # the commands build_parser adds on demand


# The machine refused a file operation: likely the environment, though still not a verdict.
_ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EMFILE,
                                 errno.ENFILE, errno.ENOMEM})


def crash_line(error: BaseException) -> str:
    """The one line a crash prints: what broke, that it is jaxgrade's fault, and how to report it."""
    where = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    what = for_terminal(" ".join(f"{type(error).__name__}: {error}".split())[:300])
    report = ("report it to the jaxgrade maintainers with the command you ran and this line (rerun with "
              "JAXGRADE_DEBUG=1 to add the traceback)")
    if isinstance(error, OSError) and error.errno in _ENVIRONMENT_ERRNOS:
        return (f"jaxgrade: internal error ({what}{at}): the machine refused a file operation. Fix that (disk "
                f"space, permissions) and run again; if it is not that, this is a bug in jaxgrade {__version__}: "
                f"{report}.")
    return (f"jaxgrade: internal error ({what}{at}). This is a bug in jaxgrade {__version__}, not in the submission "
            f"and not a grade: {report}.")


def _timings() -> Timings:
    """JAXGRADE_TIMINGS=1: a check's timings, from this process's start (grader.timings)."""
    import grader
    found = Timings()
    start = process_start()
    if start is not None:
        found.mark("process", start)
    found.mark("grader", grader.STARTED_AT)
    found.mark("main")
    return found


# The options every command takes, before or after it (grader.authoring.course): what each names.
_FOLDER_OPTIONS = {"--course": "the course's folder", "--keys": "the exercises folder of a checkout of jaxgrade"}


def course_option(arguments: list[str]) -> tuple[list[str], Path | None, Path | None]:
    """``arguments`` without ``--course DIR`` and ``--keys DIR`` (or ``--OPTION=DIR``), wherever
    they stand, and the two folders (None: not given)."""
    rest, given = [], dict.fromkeys(_FOLDER_OPTIONS)
    items = iter(arguments)
    for item in items:
        option, equals, value = item.partition("=")
        if option not in _FOLDER_OPTIONS:
            rest.append(item)
            continue
        value = value if equals else next(items, None)
        if not value:
            raise UsageError(f"{option} needs {_FOLDER_OPTIONS[option]}: {option} DIR")
        given[option] = Path(value)
    return rest, given["--course"], given["--keys"]


def main(argv: list[str] | None = None, launcher: Launcher | None = None) -> int:
    """``jaxgrade ARGV``; the exit code. ``launcher``: how a check's child starts (the warm
    service's zygote, grader.warm.service); without one, a check first asks that service
    (grader.warm.client), and grades here when none answers."""
    try:
        given = sys.argv[1:] if argv is None else argv
        arguments, course, keys = course_option(given)
        choose_course(course, keys)
        timings = _timings() if arguments[:1] == ["check"] and timings_wanted() else None
        if arguments[:1] == ["check"] and launcher is None:
            from grader.warm.client import through_service
            served = through_service(given)  # the service reads --course itself, in this working folder
            if served is not None:
                return served
        args = build_parser(command=arguments[0] if arguments else None).parse_args(arguments)
        args.timings, args.launcher = timings, launcher
        return args.run(args)
    except (UsageError, ExerciseError, RunnerFilesChanged) as error:
        print(f"jaxgrade: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("jaxgrade: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the reader went away (jaxgrade list | head): as if killed by SIGPIPE, quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the final flush must not fail again
        return ExitCode.BROKEN_PIPE
    except Exception as error:  # a crash of jaxgrade itself: never mistaken for a grade (1) or a usage error (2)
        if os.environ.get("JAXGRADE_DEBUG"):
            traceback.print_exc()
        from grader.dependencies import needed_package
        needed = needed_package(error)  # a package missing or broken: an install to fix, not a bug (exit 3)
        print(needed or crash_line(error), file=sys.stderr)
        return ExitCode.UNGRADABLE if needed else ExitCode.CRASH
    finally:  # what closed children left is given back in the background: done before returning
        choose_course(None)  # the warm service answers many commands: --course was this one's
        if launcher is None:  # (the warm service answers first, and gives back while it waits)
            from grader.sandbox.settling import settle
            settle()

