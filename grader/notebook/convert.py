"""A notebook submission made the Python the child runs: its code cells in order, IPython's
lines (magics, shell lines, help) turned into comments, cells that import what the grader does not
provide left out unless the graded function needs them, and the table of cells the child runs one
by one (``grader.child.cells``). grader.source's rules for a submission hold (its docstring says
them); which definition is graded is grader.notebook.runs'. Everything here reads the file as data.
"""
from __future__ import annotations

import ast
import bisect
import functools
import importlib.machinery
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from grader.child.cells import Cell, cells_line
from grader.errors import NotebookError
from grader.importpath import GRADER_FOLDER, imports_of
from grader.notebook.runs import CHECK_CELL, check_before, graded_definition, is_check_cell

# Cell magics whose body is still Python: the magic line goes, the body stays.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
_SHELL_ASSIGNMENT = re.compile(r"^\s*[\w.,\s]+=\s*[!%]")
_HELP_LINE = re.compile(r"^\s*(?:\?\??[\w.]+|[\w.]+\?\??)\s*$")  # IPython's help: "jnp.sum?", "??f"
_LINE_END = re.compile(r"\r\n|\r|\n")
# A notebook's code is one solution: more than this is not one (and its conversion stays bounded).
MAX_NOTEBOOK_CODE = 1 << 20
# Each JSON string becomes a Python object: bounding the quotes bounds what parsing costs
# (16 MiB of one-character lines would cost ~50 bytes each, ~10x the file).
MAX_NOTEBOOK_QUOTES = 1_000_000
MAX_NOTES = 20
# A note that is a whole sentence of the report (which definition was graded, the check cell's
# place), said as it is rather than listed among what was turned into comments.
SAID = "said: "
# Judging which cells the function needs takes the cells' syntax trees, which cost ~600x the
# code: only notebooks of up to this much code (a solution's is a few kB) are judged; larger ones
# are kept whole and run whole.
MAX_ANALYSED_CODE = 64 << 10


@dataclass(frozen=True)
class Converted:
    text: str
    notes: tuple[str, ...]


def notebook_python(data: bytes, function: str | None = None, beside: frozenset[str] = frozenset()) -> Converted:
    """A notebook's code cells as one Python file. With ``function`` (the exercise's), a cell
    that imports a module the grader does not provide, or uses what such a cell defined, is
    left out (and listed) unless ``function`` needs it; ``beside``: the student's own modules.
    The file then ends with the table of its cells (``grader.child.cells``): the child runs
    them one by one and skips a cell ``function`` does not need when it fails."""
    notes = _Notes()
    saved = read_notebook(data)
    # A check cell of shell lines (!jaxgrade check ...) is found as written: converted, it is comments.
    shell_checks = {number for number, source, _ in saved if function is not None and source.lstrip().startswith(
        ("!", "#")) and is_check_cell(source, beside)}
    cells = [_cell_python(number, source, _Notes() if number in shell_checks else notes) for number, source, _ in saved]
    counts = {number: count for number, source, count in saved if source.strip()}
    left: _Left = _Left()
    uses: dict[int, _Uses | None] = {}
    needed: dict[int, set[str]] | None = None  # None: not judged, every cell counts as needed
    graded: int | None = None  # the cell whose definition is graded, when a cell below it defines the function too
    if function is not None:
        checks = [cell.number for cell in cells if cell.number in shell_checks or is_check_cell(cell.text, beside)]
        lacking = any(not grader_provides(module, beside) for cell in cells if cell.number not in checks
                      for level, module, _ in imports_of(cell.text) if not level and module)
        if sum(len(cell.text) for cell in cells) <= MAX_ANALYSED_CODE:
            uses = {cell.number: _uses(cell.text) for cell in cells if cell.text.strip() and cell.number not in checks}
            definers = [number for number, judged in uses.items() if judged is not None and function in judged.binds]
            chosen = None
            if definers:
                chosen, said = graded_definition(definers, counts, function)
                graded = chosen if chosen != definers[-1] else None
                for sentence in (said, check_before(checks, definers, counts, function, chosen)):
                    if sentence:
                        notes.say(sentence)
            needed = _needed(uses, function, chosen)
            if lacking:  # only then can an import of a kept cell be left out
                left = _left_out(uses, needed, beside)
        elif lacking:
            notes.add(f"cells were not judged for imports the grader lacks: more than {MAX_ANALYSED_CODE >> 10} "
                      "KiB of code")
        left.cells.update(dict.fromkeys(checks, CHECK_CELL))
    parts, table, line = [], [], 1
    for cell in cells:
        lines = split_lines(cell.text)
        if cell.number in left.cells:
            notes.add(f"cell {cell.number} skipped: {left.cells[cell.number]}")
            parts.append(f"# In[{cell.number}]: skipped ({left.cells[cell.number]})\n"
                         + "\n".join(f"# {line}" for line in lines))
            line += len(lines) + 2
            continue
        for first, last, why in left.lines.get(cell.number, ()):
            notes.add(f"cell {cell.number}, line {first} skipped: {why}")
            indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
            lines[first - 1:last] = [f"{indent}pass  # skipped: {line.strip()}" if i == first else f"# {line}"
                                     for i, line in enumerate(lines[first - 1:last], start=first)]
        parts.append(f"# In[{cell.number}]:\n" + "\n".join(lines))
        # needed too: a cell that does not parse alone (the load check says why it fails), and one
        # whose star import may bind what the function reads
        judged = uses.get(cell.number)
        table.append(Cell(cell.number, line, needed is None or cell.number in needed or judged is None or judged.star,
                          cell.number == graded))
        line += len(lines) + 2  # its "# In[n]:" line, its lines, the empty line between cells
    if needed is not None:
        parts.append(cells_line(table))
    return Converted("\n\n".join(parts) + "\n", notes.done())


def split_lines(text: str) -> list[str]:
    """``text``'s lines as Python's tokenizer sees them: only \\n, \\r\\n and \\r end one (not the
    form feeds, U+2028 and other separators ``str.splitlines`` also splits at)."""
    return _LINE_END.split(text)


class CodeCell(NamedTuple):
    """A notebook's code cell as saved: its number as Jupyter shows cells (markdown too), its
    source, and its execution count (``In [7]``; None when the file shows none)."""
    number: int
    source: str
    count: int | None


def read_notebook(data: bytes) -> list[CodeCell]:
    """The code cells, numbered as Jupyter shows cells (markdown too), with every field checked:
    a NotebookError says which one is not what Jupyter writes. An execution count that is not a
    whole number (Jupyter writes one or null) counts as none."""
    if data.count(b'"') > MAX_NOTEBOOK_QUOTES:  # each JSON string costs ~50 bytes of objects once parsed
        raise NotebookError(f"a notebook of more than {MAX_NOTEBOOK_QUOTES // 2:,} lines of code or output: clear its "
                            "outputs (Kernel > Restart & Clear Output), save it, and submit it again")
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise NotebookError(f"not a notebook Jupyter can open (not JSON: {str(error)[:200]})") from None
    if not isinstance(document, dict):
        raise NotebookError(f"not a notebook Jupyter can open (a JSON {_kind(document)}, not an object)")
    version = document.get("nbformat", 4 if "cells" in document else None)
    if type(version) is not int:
        raise NotebookError(f"not a notebook Jupyter can open (its nbformat is {_kind(version)}, not a version number)")
    if version == 3:  # IPython 1-3: cells in worksheets, a code cell's text in "input"
        worksheets = _field(document, "worksheets", list, "the notebook")
        cells = [cell for number, sheet in enumerate(worksheets, start=1)
                 for cell in _field(_typed(sheet, dict, f"worksheet {number}"), "cells", list, f"worksheet {number}")]
        text_field = "input"
    elif version == 4:
        cells = _field(document, "cells", list, "the notebook")
        text_field = "source"
    else:
        raise NotebookError(f"not a notebook Jupyter can open (nbformat {version}; only 3 and 4 are read): open "
                            "it in Jupyter and save it again")
    found, code = [], 0
    for number, cell in enumerate(cells, start=1):
        where = f"cell {number}"
        cell = _typed(cell, dict, where)
        if _field(cell, "cell_type", str, where) != "code":
            continue
        source = _field(cell, text_field, (str, list), where)
        if isinstance(source, list):
            if not all(isinstance(line, str) for line in source):
                bad = next(line for line in source if not isinstance(line, str))
                raise NotebookError(f"not a notebook Jupyter can open ({where}'s {text_field} holds {_kind(bad)}, "
                                    "not only lines of text)")
            source = "".join(source)
        if not _is_text(source):  # JSON's "\\ud800": a lone surrogate, which no Python file can hold
            raise NotebookError(f"not a notebook Jupyter can open ({where}'s {text_field} holds a lone surrogate "
                                "escape, not text)")
        count = cell.get("execution_count" if version == 4 else "prompt_number")
        found.append(CodeCell(number, source, count if type(count) is int and count > 0 else None))
        code += len(source)
        if code > MAX_NOTEBOOK_CODE:
            raise NotebookError(f"a notebook whose code cells hold more than {MAX_NOTEBOOK_CODE >> 20} MiB of Python, "
                                "not a solution")
    return found


def _is_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null",
             int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _typed(value: object, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(value, kind):
        wanted = " or ".join(_kind(k()) for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise NotebookError(f"not a notebook Jupyter can open ({where} is {_kind(value)}, not {wanted})")
    return value


def _field(holder: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if name not in holder:
        raise NotebookError(f"not a notebook Jupyter can open ({where} has no {name!r})")
    return _typed(holder[name], kind, f"{where}'s {name!r}")


class _Notes:
    """What conversion changed, at most ``MAX_NOTES`` of them and a count of the rest (a notebook
    of a million magic lines costs a few notes, not a million)."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.said: list[str] = []  # sentences the report says as they are (``SAID``), a few at most
        self.more = 0

    def say(self, sentence: str) -> None:
        self.said.append(SAID + sentence)

    def add(self, note: str) -> None:
        if len(self.kept) < MAX_NOTES:
            self.kept.append(note)
        else:
            self.more += 1

    def done(self) -> tuple[str, ...]:
        return (*self.said, *self.kept, f"and {self.more} more") if self.more else (*self.said, *self.kept)


@dataclass(frozen=True)
class _Cell:
    number: int
    text: str


def _cell_python(number: int, source: str, notes: _Notes) -> _Cell:
    """One code cell as Python: IPython magics and shell lines turned into ``pass`` with the line
    as a comment (a block keeps its body), a cell magic that is not Python all commented out."""
    if not source.strip():
        return _Cell(number, "")
    lines = split_lines(source)
    first = lines[0].strip()
    if first.startswith("%%"):
        magic = (first[2:].split() or [""])[0]
        if magic not in PYTHON_CELL_MAGICS:
            notes.add(f"cell {number}: a %%{magic} cell, not Python")
            return _Cell(number, f"# a %%{magic} cell, not Python\n" + "\n".join(f"# {line}" for line in lines))
        notes.add(f"cell {number}: {first[:80]}")
        lines = [f"# {lines[0]}", *lines[1:]]
    kept = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")) or _SHELL_ASSIGNMENT.match(line) or _HELP_LINE.match(line):
            notes.add(f"cell {number}: {stripped[:80]}")
            kept.append(f"{line[:len(line) - len(stripped)]}pass  # IPython: {stripped}")
        else:
            kept.append(line)
    return _Cell(number, "\n".join(kept))


@dataclass(frozen=True)
class _Import:
    """One import statement of a cell: its lines, the modules it imports, the names it binds,
    and whether dropping it alone is possible (it stands at the cell's top level, unguarded)."""
    first: int
    last: int
    modules: tuple[str, ...]
    binds: frozenset[str]
    alone: bool


@dataclass
class _Uses:
    """What one cell binds and reads, from its syntax alone (nothing is run): ``reads`` when
    the cell runs, ``later[name]`` what the function or class ``name`` reads when it is called,
    ``imports`` its imports outside ``try`` (an import the cell guards itself is its business)."""
    binds: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)
    later: dict[str, set[str]] = field(default_factory=dict)
    imports: list[_Import] = field(default_factory=list)
    star: bool = False  # a ``from m import *``: what it binds is not in the syntax


def _names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _globals_read(definition: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    """The names a function (or a class's methods) may read from the notebook's globals: every
    name read in it but its parameters and the local names it assigns (unless declared global)."""
    local: set[str] = set()
    declared: set[str] = set()
    for node in ast.walk(definition):
        if isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not definition:
            local.add(node.name)
        elif isinstance(node, ast.Global):
            declared.update(node.names)
    return _names_read(definition) - (local - declared)


def _stored(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _uses(text: str) -> _Uses | None:
    """None when the cell is not Python: it is kept, and the load check says why it fails."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    uses = _Uses()

    def visit(statements: list[ast.stmt], guarded: bool, top: bool) -> None:
        for statement in statements:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                uses.binds.add(statement.name)
                header: list[ast.AST] = [*statement.decorator_list]
                if isinstance(statement, ast.ClassDef):
                    header += [*statement.bases, *statement.keywords]
                else:
                    header += [*statement.args.defaults, *filter(None, statement.args.kw_defaults)]
                for node in header:
                    uses.reads |= _names_read(node)
                uses.later.setdefault(statement.name, set()).update(_globals_read(statement))
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                if isinstance(statement, ast.ImportFrom) and statement.level:
                    continue  # a notebook is no package: the load check says what fails
                bound = frozenset(alias.asname or alias.name.split(".")[0] for alias in statement.names
                                  if alias.name != "*")
                uses.star |= any(alias.name == "*" for alias in statement.names)
                uses.binds |= bound
                modules = ((statement.module,) if isinstance(statement, ast.ImportFrom) and statement.module
                           else tuple(alias.name for alias in statement.names))
                if not guarded:
                    uses.imports.append(_Import(statement.lineno, statement.end_lineno or statement.lineno,
                                                modules, bound, top))
            elif isinstance(statement, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                visit(statement.body, True, False)
                for handler in statement.handlers:
                    visit(handler.body, guarded, False)
                visit(statement.orelse, guarded, False)
                visit(statement.finalbody, guarded, False)
            elif isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.AsyncFor, ast.AsyncWith)):
                for name, value in ast.iter_fields(statement):
                    if name in ("body", "orelse"):
                        visit(value, guarded, False)
                    else:
                        for node in value if isinstance(value, list) else [value]:
                            if isinstance(node, ast.AST):
                                uses.reads |= _names_read(node)
                                uses.binds |= _stored(node)
            else:
                uses.reads |= _names_read(statement)
                uses.binds |= _stored(statement)

    visit(tree.body, False, True)
    return uses


@dataclass
class _Left:
    """What is left out of a notebook: whole cells, and single import lines of kept cells."""
    cells: dict[int, str] = field(default_factory=dict)                        # cell → why
    lines: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)  # cell → (first, last, why)


def _needed(uses: dict[int, _Uses | None], function: str, root: int | None = None) -> dict[int, set[str]]:
    """The cells ``function`` needs, each with the names it is needed for: the one whose
    definition is graded (``root``; by default the last to define it), and the cells binding the helpers, constants and imports it reads (when called, or what
    those cells read as they run), transitively. Any other cell only demonstrates: leaving it
    out changes nothing the function computes."""
    binders: dict[str, list[int]] = {}  # name → the cells binding it, in order
    for number, cell in uses.items():
        for name in (cell.binds if cell is not None else ()):
            binders.setdefault(name, []).append(number)

    def binder(name: str, before: int | None) -> int | None:
        """The cell whose ``name`` is the one read: the last to bind it before ``before`` (the
        cell reading it as it runs), or the last of all (a function reads globals when called)."""
        found = binders.get(name, [])
        index = len(found) if before is None else bisect.bisect_left(found, before)
        return found[index - 1] if index else None

    needed: dict[int, set[str]] = {}  # cell → the names it is needed for
    pending = [(start, function) for start in [binder(function, None) if root is None else root]
               if start is not None]
    while pending:
        number, name = pending.pop()
        first = number not in needed
        if not first and name in needed[number]:
            continue
        needed.setdefault(number, set()).add(name)
        cell = uses[number]
        if cell is None:
            continue
        for read in cell.reads if first else ():
            if (source := binder(read, number)) is not None:
                pending.append((source, read))
        for read in cell.later.get(name, ()):
            if (source := binder(read, None)) is not None:
                pending.append((source, read))
    return needed


def _left_out(uses: dict[int, _Uses | None], needed: dict[int, set[str]], beside: frozenset[str]) -> _Left:
    """What to leave out so that a notebook runs as the student ran it: each import of a module
    the grader does not provide, and each cell that reads what such an import bound, unless
    the function needs the cell (``needed``: then it stays, and importing the file fails naming
    the module)."""
    left = _Left()
    unavailable: dict[str, str] = {}  # a name whose binding was left out → the module it needed
    for number, cell in uses.items():
        if cell is None:
            continue
        wanted = needed.get(number, set()) | cell.reads
        dropped: list[tuple[int, int, str]] = []
        dropped_names: dict[str, str] = {}
        cause = None  # the module that keeps the whole cell from running
        for statement in cell.imports:
            module = next((m for m in statement.modules if not grader_provides(m, beside)), None)
            if module is None:
                continue
            if statement.alone and not statement.binds & wanted:
                dropped.append((statement.first, statement.last, f"imports {module}, which the grader does not "
                                                                 "provide"))
                dropped_names.update(dict.fromkeys(statement.binds, module))
            elif cause is None:
                cause, why = module, f"imports {module}, which the grader does not provide"
        read = next((name for name in sorted(cell.reads) if name in unavailable), None)
        if cause is None and read is not None:
            cause, why = unavailable[read], f"uses {read}, which needs {unavailable[read]}, which the grader does " \
                                            "not provide"
        if cause is not None and number not in needed:
            left.cells[number] = why
            unavailable.update(dict.fromkeys(cell.binds, cause))
            continue
        if dropped:
            left.lines[number] = dropped
        for name in cell.binds:
            unavailable.pop(name, None)
        unavailable.update(dropped_names)
    return left


@functools.lru_cache(maxsize=1)
def _child_search_path() -> tuple[str, ...]:
    """Where a child finds modules: the ``sys.path`` of this interpreter started as children are
    (``-I``: no user site, no PYTHONPATH, no current folder) with the folders of the grader's
    dependencies as a child adopts them (grader.child.search_path), without the folder holding
    only the grader's package, which children drop. Asked of the interpreter, so it is exact."""
    from grader.child.search_path import merged
    from grader.importpath import dependency_folders
    grader_parent = os.path.realpath(GRADER_FOLDER)
    try:
        run = subprocess.run([sys.executable, "-I", "-c", "import json, sys; print(json.dumps(sys.path))"],
                             capture_output=True, text=True, timeout=60, check=True)
        found = json.loads(run.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        found = sys.path  # this process's own: the same interpreter and site-packages
    order, needed = dependency_folders()
    found = merged([entry for entry in found if isinstance(entry, str)], list(order), list(needed))
    return tuple(entry for entry in found if os.path.isabs(entry)
                 and (os.path.realpath(entry) != grader_parent or grader_parent in needed))


_GRADER = __name__.partition(".")[0]  # this package, however it is installed


@functools.lru_cache(maxsize=1024)
def grader_provides(module: str, beside: frozenset[str] = frozenset()) -> bool:
    """Whether ``import module`` can succeed in a child, judged for the children's Python
    environment (the grader's own interpreter, :func:`_child_search_path`) by finding the
    module's files without importing anything: built-in and frozen modules, then each dotted
    part on that path (namespace packages too). ``beside``: the student's own module names,
    importable beside the submission. Never the grader itself: a child finds it in a wheel's
    site-packages (not in a checkout, whose folder children drop), but ``grader.check()`` grades
    nothing there, and a cell calling it would import the grader's whole report stack into every
    child (0.4-2 s a check) and be skipped with another note than a checkout's report gives."""
    parts = module.split(".")
    if parts[0] in beside or parts[0] in sys.builtin_module_names:
        return True
    if parts[0] == _GRADER:
        return False
    if len(parts) == 1 and importlib.machinery.FrozenImporter.find_spec(parts[0]) is not None:
        return True
    search: list[str] | None = list(_child_search_path())
    for depth in range(len(parts)):
        if search is None:
            return True  # a module, not a package, that sets its own submodules (os.path): importing tells
        try:
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:depth + 1]), search)
        except (ImportError, ValueError):
            return False
        if spec is None:
            return False
        locations = spec.submodule_search_locations
        search = list(locations) if locations is not None else None
    return True


def notebook_note(notes: tuple[str, ...], skipped: tuple[str, ...] = ()) -> str | None:
    """What the report says about a notebook's conversion (``notes``) and the cells skipped
    when they failed as they ran (``skipped``), or None when nothing changed. A note that starts
    with ``SAID`` (which definition was graded) is a sentence of its own; the others are listed
    as what was turned into comments."""
    if not notes and not skipped:
        return None
    said = ["Your notebook was graded as the Python of its code cells, in order."]
    said += [note.removeprefix(SAID) for note in notes if note.startswith(SAID)]
    notes = tuple(note for note in notes if not note.startswith(SAID))
    if notes:
        said.append(f"IPython lines, cells that are not Python, and code your function does not need that imports "
                    f"what the grader does not provide were turned into comments ({_listed(notes)}): the grader "
                    f"runs Python, not IPython.")
    if skipped:
        said.append(f"Cells your function does not need that failed when they ran were skipped, and the cells "
                    f"after them ran ({_listed(skipped)}).")
    return " ".join(said)


def _listed(notes: tuple[str, ...]) -> str:
    return "; ".join(notes[:5]) + (f"; and {len(notes) - 5} more" if len(notes) > 5 else "")
