"""What a submission is, whatever it arrived as: the file to grade, the helper modules beside it,
and notebooks turned into Python. One rule for every entry point (``jaxgrade check``, the
class run's intake, the Gradescope and PrairieLearn autograders):

- among several Python files, the one that defines the exercise's function is graded; the
  others are its helper modules, importable beside it (``from helpers import ...``);
- a notebook (``.ipynb``) is graded as the Python of its code cells, in order (nbformat 4 as
  Jupyter, Colab and VS Code write it, and nbformat 3's worksheets). A typed reader checks
  every field it uses, so a cell whose source is a number is a clear NotebookError, never a
  crash. IPython magics and shell lines (``%timeit``, ``!pip install``, ``%%bash`` cells) become
  comments; a cell that imports a module the grader does not provide (``google.colab``,
  ``matplotlib``), or uses what such a cell defined, is left out unless the graded function
  needs it (then the import stays, and the load check names the missing module). The report
  lists every such change;
- a notebook runs as Jupyter's Run All runs it, cell by cell, except that a cell the graded
  function does not need is skipped when it fails as it runs (a demo that reads a file the
  grader lacks, plots, or calls the function on a bad input). Which cells the function needs
  is judged from their syntax (``_needed``: the cell that last defines it, and those defining
  the helpers, constants and imports it uses, transitively); the converted file ends with that
  table (``grader.child.cells``), and the child (``grader.child.server``) runs the cells and
  reports those it skipped, which the load check lists. A needed cell that fails fails the
  load, named by its number. Notebooks of more than ``MAX_ANALYSED_CODE`` of code, and ``.py``
  files, run whole;
- which definition of the function is graded follows the notebook's execution counts
  (``grader.notebook.runs``, where the rule is written down): the cells run top to bottom, but
  the definition the kernel ran last (highest ``In [n]``) is the one graded, marked in the
  table; without counts, the last in the file. The course's check cell (``import grader;
  grader.check()``) is left out with a note, never taken for an unknown import.

Everything here reads files as data: nothing of a student's is executed or imported.
"""
from __future__ import annotations

import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

from grader.errors import NotebookError
from grader.importpath import imports_of
from grader.notebook.convert import Converted, notebook_python

SUFFIXES = (".py", ".ipynb")
MAX_HELPERS, MAX_HELPER_BYTES = 32, 1 << 20
def defines(text: str, function: str) -> bool:
    """Whether Python source ``text`` defines ``function`` at the start of a line."""
    return re.search(rf"^\s*def\s+{re.escape(function)}\s*\(", text, re.MULTILINE) is not None


def python_of(data: bytes, suffix: str, function: str | None = None,
              beside: frozenset[str] = frozenset()) -> Converted:
    """The Python a submission file stands for: a .py as it is, a notebook's code cells (with
    ``function``, the exercise's, without the cells it does not need that cannot run here)."""
    if suffix != ".ipynb":
        return Converted(data.decode("utf-8", errors="surrogateescape"), ())
    return notebook_python(data, function, beside)


def choose(texts: dict[Path, str], function: str) -> tuple[Path | None, str]:
    """Which of a submission's files to grade: the only one, else the one that defines
    ``function``; None and why when none or several do."""
    if len(texts) == 1:
        return next(iter(texts)), ""
    defining = [path for path, text in texts.items() if defines(text, function)]
    if len(defining) == 1:
        return defining[0], ""
    listed = ", ".join(sorted(p.name for p in texts)[:8])
    if not defining:
        return None, f"none of the files ({listed}) defines {function}(); the solution must define it"
    return None, (f"several files ({', '.join(sorted(p.name for p in defining))}) define {function}(); keep it in "
                  "one file and import helpers from the others")


def modules_needed(main: PurePosixPath, text: str, read: Callable[[PurePosixPath], str | None]) -> list[PurePosixPath]:
    """The student's own modules that ``main`` (a path relative to its folder, the child's
    import root) imports, directly or through one another, package ``__init__.py`` files
    included, as paths relative to that folder: a ``tests/`` package or a script nothing
    imports is not among them. ``read(path)``: the text of the student's file there, or None.
    Imports are found in the syntax (anywhere in a module: a function's own import too)."""
    found: list[PurePosixPath] = []
    pending = [(main, text)]
    seen = {main}

    def visit(path: PurePosixPath) -> bool:
        """Whether the student has a module file at ``path``; a new one is read for its imports."""
        if path in seen:
            return True
        content = read(path)
        if content is None or len(found) >= MAX_HELPERS:
            return False
        seen.add(path)
        found.append(path)
        pending.append((path, content))
        return True

    def module(dotted: tuple[str, ...]) -> None:
        """The files ``import a.b.c`` runs: each package's __init__.py (a folder without one is
        a namespace package), then the module's own file."""
        if not all(part.isidentifier() for part in dotted):
            return
        for depth in range(1, len(dotted)):
            visit(PurePosixPath(*dotted[:depth], "__init__.py"))
        last = PurePosixPath(*dotted)
        if not visit(last.with_name(f"{dotted[-1]}.py")):
            visit(last / "__init__.py")

    while pending:
        path, source = pending.pop()
        package = path.parent.parts  # a module's package is its folder (main's is none)
        for level, name, names in imports_of(source):
            if level and (path == main or level - 1 > len(package)):
                continue  # main is run as a script: a relative import there fails, as it does for the student
            dotted = (*package[:len(package) - (level - 1)], *(name.split(".") if name else ())) if level \
                else tuple(name.split(".") if name else ())
            if dotted:
                module(dotted)
            for member in names:  # "from pkg import sub": sub may be a module of pkg
                if member != "*":
                    module((*dotted, member))
    return sorted(found)


def helpers_beside(main: Path, function: str | None = None, folder: Path | None = None) -> tuple[Path, ...]:
    """The student's own modules that ``main`` imports from its folder (``modules_needed``: at
    most ``MAX_HELPERS``, each at most ``MAX_HELPER_BYTES``, never links), package structure
    kept: each lies at its import path under ``main``'s folder (or ``folder``: a kernel's
    working folder, for its cells written out elsewhere). With ``function`` (the
    exercise's), a module that defines it too is no helper but another submission (a classmate's
    file in the same folder): it stays behind (``left_behind`` names them)."""
    return _beside(main, function, folder)[0]


def left_behind(main: Path, function: str) -> tuple[Path, ...]:
    """The modules ``main`` imports from its folder that ``helpers_beside`` leaves behind because
    they define ``function``: another submission's work is never graded as this one's."""
    return _beside(main, function)[1]


def _beside(main: Path, function: str | None,
            folder: Path | None = None) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    others: list[Path] = []
    base = folder if folder is not None else main.parent

    def read(relative: PurePosixPath) -> str | None:
        path = base.joinpath(*relative.parts)
        try:
            status = path.lstat()
        except OSError:
            return None
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_HELPER_BYTES:
            return None
        try:
            text = path.read_bytes().decode("utf-8", "surrogateescape")
        except OSError:
            return None
        if function is not None and defines(text, function):
            others.append(path)
            return None
        return text

    try:
        text = python_of(main.read_bytes(), main.suffix).text
    except (OSError, NotebookError):
        return (), ()
    found = tuple(base.joinpath(*p.parts) for p in modules_needed(PurePosixPath(main.name), text, read))
    return found, tuple(sorted(set(others)))


def left_behind_note(left: tuple[Path, ...], function: str) -> str:
    """What the report says of the modules left behind (``left_behind``), or "" for none."""
    if not left:
        return ""
    names = ", ".join(path.name for path in left[:5])
    return (f"{names} {'defines' if len(left) == 1 else 'define'} {function} too: another submission, not a helper "
            "module, so it was not graded with your file. Put your own solution in your file; a helper module must "
            f"not define {function}.")


def helper_at(main: Path, helper: Path) -> PurePosixPath:
    """Where a helper module of ``main`` lies relative to ``main``'s folder (its import path, as
    ``helpers_beside`` and a class's intake lay it out: ``tools/meshes.py``); a helper given
    elsewhere lies beside ``main``. The child's copy, and a Dask worker's, put it there."""
    try:
        return PurePosixPath(helper.relative_to(main.parent).as_posix())
    except ValueError:
        return PurePosixPath(helper.name)


def helper_path(text: str) -> PurePosixPath:
    """``text`` (a ``helper_at`` path that travelled) as a path inside the submission's folder;
    ValueError for one that would leave it (absolute, ``..``, a backslash, an empty part)."""
    path = PurePosixPath(text)
    if not text or path.is_absolute() or "\\" in text or "\0" in text \
            or any(part in ("", ".", "..") for part in text.split("/")):
        raise ValueError(f"refusing the helper module path {text!r}: a path inside the submission's folder")
    return path


@dataclass(frozen=True)
class Prepared:
    """A submission ready to grade: ``path`` is Python (a notebook's code cells written out),
    ``shown`` the name the student gave it, ``helpers`` the modules beside it."""
    path: Path
    shown: str
    helpers: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()


def prepare_folder(folder: Path, function: str, scratch: Path, preferred: str | None = None) -> tuple[Prepared | None, str]:
    """The submission in an autograder's upload folder: ``preferred`` (e.g. ``slug.py``) when
    exactly one file has that name, else the one file there, else the one that defines
    ``function``. Notebooks are written as Python into ``scratch``. None and why (for the
    student) when no file, or no single file, can be chosen."""
    files = sorted(p for p in folder.rglob("*") if p.suffix in SUFFIXES and p.is_file() and not p.is_symlink()
                   and not any(part.startswith((".", "__")) for part in p.relative_to(folder).parts))
    if not files:
        upload = f" as {preferred}" if preferred else ""
        return None, f"No Python file was submitted (a .py file or a notebook). Upload your solution{upload}: it " \
                     f"defines {function}."
    texts: dict[Path, str] = {}
    for path in files:
        try:
            texts[path] = python_of(path.read_bytes(), path.suffix).text
        except (OSError, NotebookError) as error:
            return None, f"{path.name} could not be read as Python: {error}"
    named = [p for p in files if preferred and p.name == preferred]
    chosen, why = (named[0], "") if len(named) == 1 else choose(texts, function)
    if chosen is None:
        return None, f"Several files were submitted and jaxgrade cannot tell which is your solution: {why}."
    helpers = helpers_beside(chosen, function)
    converted = python_of(chosen.read_bytes(), chosen.suffix, function, frozenset(h.stem for h in helpers))
    graded = chosen
    if chosen.suffix == ".ipynb":
        graded = scratch / f"{chosen.stem if chosen.stem.isidentifier() else 'submission'}.py"
        graded.write_text(converted.text, errors="surrogateescape")
    return Prepared(graded, chosen.name, helpers, converted.notes), ""
