"""What a submission is, whatever it arrived as: the file to grade, the helper modules beside it,
and notebooks turned into Python. One rule for every entry point (``jaxgrade check``, the
class run's intake, the Gradescope and PrairieLearn autograders):

- among several Python files, the one that defines the exercise's function is graded; the
  others are its helper modules, importable beside it (``from helpers import ...``);
- a notebook (``.ipynb``) is graded as the Python of its code cells, in order, read with
  ``nbformat`` (every notebook version Jupyter wrote); IPython magics and shell lines
  (``%timeit``, ``!pip install``, ``%%bash`` cells) are turned into comments, and the report
  says which.

Everything here reads files as data; nothing is executed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from grader.errors import NotebookError

SUFFIXES = (".py", ".ipynb")
MAX_HELPERS, MAX_HELPER_BYTES = 32, 1 << 20
# Cell magics whose body is still Python: the magic line goes, the body stays.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
_SHELL_ASSIGNMENT = re.compile(r"^\s*[\w.,\s]+=\s*[!%]")


@dataclass(frozen=True)
class Converted:
    text: str
    notes: tuple[str, ...]


def defines(text: str, function: str) -> bool:
    """Whether Python source ``text`` defines ``function`` at the start of a line."""
    return re.search(rf"^\s*def\s+{re.escape(function)}\s*\(", text, re.MULTILINE) is not None


def python_of(data: bytes, suffix: str) -> Converted:
    """The Python a submission file stands for: a .py as it is, a notebook's code cells."""
    if suffix != ".ipynb":
        return Converted(data.decode("utf-8", errors="surrogateescape"), ())
    return notebook_python(data)


def notebook_python(data: bytes) -> Converted:
    import nbformat  # only notebooks need it

    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as error:  # nbformat raises several kinds for a file that is not a notebook
        raise NotebookError(f"not a notebook Jupyter can open ({type(error).__name__}: {str(error)[:200]})") from None
    parts: list[str] = []
    notes: list[str] = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        lines = cell.source.splitlines()
        first = lines[0].strip()
        if first.startswith("%%"):
            magic = (first[2:].split() or [""])[0]
            if magic not in PYTHON_CELL_MAGICS:
                notes.append(f"cell {number}: a %%{magic} cell, not Python")
                parts.append(f"# In[{number}]: a %%{magic} cell, not graded\n"
                             + "\n".join(f"# {line}" for line in lines))
                continue
            notes.append(f"cell {number}: {first}")
            lines = [f"# {lines[0]}", *lines[1:]]
        kept = []
        for line in lines:
            stripped = line.lstrip()
            if stripped.startswith(("%", "!")) or _SHELL_ASSIGNMENT.match(line):
                notes.append(f"cell {number}: {stripped[:80]}")
                kept.append(f"{line[:len(line) - len(stripped)]}pass  # jaxgrade: IPython line: {stripped}")
            else:
                kept.append(line)
        parts.append(f"# In[{number}]:\n" + "\n".join(kept))
    return Converted("\n\n".join(parts) + "\n", tuple(notes))


def notebook_note(notes: tuple[str, ...]) -> str | None:
    """What the report says about a notebook's conversion, or None when nothing changed."""
    if not notes:
        return None
    shown = "; ".join(notes[:5]) + (f"; and {len(notes) - 5} more" if len(notes) > 5 else "")
    return (f"Your notebook was graded as the Python of its code cells, in order. IPython lines and cells "
            f"that are not Python were turned into comments ({shown}): the grader runs Python, not IPython.")


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


def helpers_beside(main: Path) -> tuple[Path, ...]:
    """The other Python modules in ``main``'s folder, which it may import (at most
    ``MAX_HELPERS``, each at most ``MAX_HELPER_BYTES``; never links)."""
    found = []
    for path in sorted(main.parent.glob("*.py")):
        if path.name == main.name or path.is_symlink() or not path.is_file():
            continue
        if path.stat().st_size <= MAX_HELPER_BYTES and path.stem.isidentifier():
            found.append(path)
    return tuple(found[:MAX_HELPERS])


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
    converted = python_of(chosen.read_bytes(), chosen.suffix)
    graded = chosen
    if chosen.suffix == ".ipynb":
        graded = scratch / f"{chosen.stem if chosen.stem.isidentifier() else 'submission'}.py"
        graded.write_text(converted.text, errors="surrogateescape")
    return Prepared(graded, chosen.name, helpers_beside(chosen), converted.notes), ""
