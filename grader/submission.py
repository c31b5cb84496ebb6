"""One student's submission as the library and ``jaxgrade check`` take it: a ``.py`` file, a
notebook (graded as the Python of its code cells, ``grader.source``) or a folder of that
student's files (the file chosen as the Gradescope and PrairieLearn autograders choose it,
``grader.source.prepare_folder``). Both entry points share this, so they grade alike and refuse
alike, with the same one-line messages (UsageError)."""
from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from grader.errors import NotebookError, UsageError
from grader.source import Converted, Prepared, helpers_beside, prepare_folder, python_of

if TYPE_CHECKING:  # imported when used: jaxgrade check reads the file before it imports the engine
    from grader.authoring.exercise import Exercise
    from grader.report.result import Report
    from grader.sandbox.pool import Pool
    from grader.sandbox.process import ChildProcess


def read_submission(path: Path, shown: str | None = None) -> Converted:
    """The Python of the file at ``path`` (a notebook's code cells, all of them), to tell which
    exercise it is for; UsageError, saying what to give instead, for a file that is missing,
    unreadable or not a notebook."""
    shown = shown or str(path)
    if not path.is_file():
        raise UsageError(f"no such file: {shown} (give the path to your solution, a .py file or a notebook)")
    try:
        return python_of(path.read_bytes(), path.suffix)
    except OSError as error:
        raise UsageError(f"cannot read {shown}: {error.strerror}") from None
    except NotebookError as error:
        raise UsageError(f"{shown} is {error}; save it again from Jupyter, or give the .py file") from None


@contextlib.contextmanager
def prepared(path: Path, exercise: Exercise, shown: str | None = None,
             helpers_in: Path | None = None) -> Iterator[Prepared]:
    """``path`` ready to grade against ``exercise`` while the context lasts: a ``.py`` file as
    it is, a notebook written out as Python in a scratch folder, a folder's chosen file; with
    the helper modules beside it (or in ``helpers_in``) and what preparing it changed.
    UsageError when it cannot be."""
    path = Path(path)
    shown = shown or str(path)
    if path.is_dir():
        with tempfile.TemporaryDirectory(prefix="jaxgrade-check-") as scratch:
            found, why = prepare_folder(path, exercise.function, Path(scratch), f"{exercise.slug}.py")
            if found is None:
                raise UsageError(f"cannot grade the folder {shown}: {why}")
            yield Prepared(found.path, str(Path(shown) / found.shown), found.helpers, found.notes)
        return
    read_submission(path, shown)
    helpers = helpers_beside(path, exercise.function, helpers_in)
    if path.suffix != ".ipynb":  # graded as it is: no scratch folder (a full disk is the grading's to report)
        yield Prepared(path, shown, helpers, ())
        return
    with tempfile.TemporaryDirectory(prefix="jaxgrade-check-") as scratch:  # the Python of the cells the function needs
        converted = python_of(path.read_bytes(), path.suffix, exercise.function, frozenset(h.stem for h in helpers))
        graded = Path(scratch) / f"{path.stem if path.stem.isidentifier() else 'submission'}.py"
        graded.write_text(converted.text, errors="surrogateescape")
        yield Prepared(graded, shown, helpers, converted.notes)


def grade(exercise: Exercise, submission: Path | str, *, display_path: str | None = None,
          helpers_in: Path | None = None, **options: Any) -> Report:
    """Grade ``submission`` (a ``.py`` file, a notebook or a folder of one student's files)
    against ``exercise``, as ``jaxgrade check`` does; ``options`` are ``grader.engine.grade``'s
    (``seed``, ``limits``, ``compile_cache``, ...). ``helpers_in``: the folder its helper
    modules are in, when not its own. UsageError for a submission that cannot be
    graded at all (missing, not a notebook, no file to grade in a folder); never raises for
    anything the submission does. When it returns, nothing of the submission runs and what its
    child left is removed (a class run leaves that to a background thread: grader.sandbox.settling)."""
    from grader.engine import grade as grade_python
    from grader.sandbox.settling import settle
    try:
        with prepared(Path(submission), exercise, display_path, helpers_in) as found:
            return grade_python(exercise, found.path, display_path=found.shown, helpers=found.helpers,
                                notes=found.notes, **options)
    finally:
        settle()


def exercise_of(converted: Converted, slug: str | None, shown: str, *, option: str = "-e SLUG",
                example: str = "jaxgrade check {file} -e {slug}") -> Exercise:
    """The exercise a file (its Python: ``read_submission``) is graded against: the one named
    ``slug``, else the one whose function it defines; UsageError, saying what to do, for none or
    several. ``option`` and ``example`` say how the caller names one (``jaxgrade check``'s ``-e``,
    the pytest plugin's ``--jaxgrade FILE::SLUG``)."""
    from grader.authoring.exercise import all_exercises, exercises_for_source, find_exercise
    if slug:
        return find_exercise(slug)
    candidates = exercises_for_source(converted.text)
    if len(candidates) > 1:
        named = ", ".join(f"{e.function} ({e.slug})" for e in candidates)
        raise UsageError(f"cannot tell which exercise {shown} is for: it defines the functions of "
                         f"{len(candidates)} exercises, {named}. Pick one with {option}, e.g. "
                         f"{example.format(file=shown, slug=candidates[0].slug)}")
    if not candidates:
        known = ", ".join(f"{e.slug} ({e.function})" for e in all_exercises())
        raise UsageError(f"cannot tell which exercise {shown} is for: it defines none of the exercises' "
                         f"functions. Pass {option}; known exercises: {known}")
    return candidates[0]


def early_pool(exercise: Exercise) -> Pool:
    """A warm process for ``exercise``'s children, starting now (``jaxgrade check`` starts it
    before its own imports, so that its JAX import overlaps them): the grading forks its child
    and the witness from it (``launcher=pool.launch``), where exec'ing each would import JAX
    twice. Keyed by the exercise's devices and the compilation cache the grading will use (none
    yet where the reference has to fill it first: the zygote for the filled cache starts then)."""
    from grader.cache import compile_cache_of
    from grader.sandbox.pool import Pool
    pool = Pool()
    # without the answer key the grading uses no cache (grader.engine.warm_compile_cache)
    cache, unfilled = compile_cache_of(exercise.slug, exercise.fingerprint) if exercise.has_key else (None, None)
    if unfilled is None:
        pool.warm(exercise.devices, cache)
    return pool


def early_child(exercise: Exercise, path: Path) -> ChildProcess | None:
    """The child a grading of ``path`` would spawn, spawned now (``jaxgrade check`` does so before
    its own imports, so that the child's JAX import overlaps them; ``grader.check()`` in a kernel
    keeps one ready for its next check): the very child the grading would
    spawn (``grade`` uses it only if so, grader.observe.session), launched with the exercise's
    devices and limits, the compilation cache and what it must not see. None (the child is
    spawned by the grading, as before) for a notebook, which is graded as a file written later
    in a folder of its own; for an exercise whose compilation cache its reference has not filled
    yet (the reference is graded first, in a child of its own); and when spawning fails here (the
    grading then meets the same failure, where it reports it)."""
    if path.suffix == ".ipynb":
        return None
    from grader.cache import compile_cache_of
    from grader.authoring.exercise import hidden_from_child
    from grader.sandbox.process import ChildProcess
    try:
        # without the answer key the grading uses no cache (grader.engine.warm_compile_cache)
        cache, unfilled = compile_cache_of(exercise.slug, exercise.fingerprint) if exercise.has_key else (None, None)
        if unfilled is not None:
            return None
        return ChildProcess(exercise.devices, exercise.limits, cache,
                            hide=(str(path.resolve().parent), *hidden_from_child(exercise)))
    except Exception:  # noqa: BLE001 (a disk full, no uid to lease: the grading tries again and says so)
        return None
