"""What a notebook's file says of how its kernel ran it: which definition of the graded function
the kernel held, and which cell is the check cell. Read from the saved file as data (cells'
sources and execution counts); nothing of the student's runs here.

Which definition is graded (``graded_definition``), the rule every entry point follows:

- the cells still run top to bottom, as Jupyter's Restart & Run All runs them; only *which
  definition of the graded function* is graded follows the execution counts;
- when code cells carry execution counts (``In [7]``), the definition in the cell run last
  (the highest count) is graded, as the kernel held it when the notebook was saved: a final
  version above a draft that ran first is the one graded, not the draft;
- a cell without a count while others have one was never run, or its output was cleared (the
  file cannot tell, nor whether a cell was edited after it ran): a counted definition wins over
  it; when no definition has a count, the last in the file is graded, and the report says its
  code was graded as saved;
- without any counts (never run, or all outputs cleared) the last definition in the file is
  graded, as today;
- whenever the function is defined in more than one cell, the report names the cell graded
  and the others.

The check cell (``is_check_cell``): a cell that only imports ``grader`` (``import grader``,
``from grader import check``) and calls what it imported (``grader.check()``,
``check("slug")``, ``print(...)`` of it) is the course's own check; ``jaxgrade check`` does
that job, so the cell is left out, with a mild note, never reported as an unknown import. A
check cell that ran before every definition of the function is said in one line. A cell of
shell lines that only run the check command (``!jaxgrade check work.ipynb -e SLUG``, as the
starter notebook of ``jaxgrade start --notebook`` has; ``!python check work.ipynb`` in a
student's folder) is the check cell too.
"""
from __future__ import annotations

import ast
import re

CHECK_CELL = "the check cell (jaxgrade check runs the checks itself)"
# A check cell is a line or two: longer cells are not parsed to find out.
_MAX_CHECK_CELL = 2000
_SHOWN = frozenset({"print", "display"})
# A shell line that runs the check: jaxgrade check, python -m grader check, a student folder's check script.
_CHECK_COMMAND = re.compile(r"!\s*(?:jaxgrade\s+check|(?:\S*python3?|\{sys\.executable\})\s+(?:-m\s+grader\s+check|"
                            r"(?:\./)?check))(?:\s|$)")


def is_check_cell(text: str, beside: frozenset[str] = frozenset()) -> bool:
    """Whether a cell's Python only imports ``grader`` and calls what it imported (``beside``:
    the student's own modules; a module of theirs named ``grader`` is theirs, not a check)."""
    if len(text) > _MAX_CHECK_CELL:
        return False
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    if lines and all(_CHECK_COMMAND.match(line) for line in lines):
        return True
    if "grader" in beside or "grader" not in text:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    imported: set[str] = set()
    known = set(_SHOWN)
    called = False
    for statement in tree.body:
        if isinstance(statement, ast.Import) and all(_of_grader(a.name) for a in statement.names):
            imported |= {a.asname or a.name.split(".")[0] for a in statement.names}
        elif isinstance(statement, ast.ImportFrom) and not statement.level and _of_grader(statement.module or "") \
                and all(a.name != "*" for a in statement.names):
            imported |= {a.asname or a.name for a in statement.names}
        elif isinstance(statement, (ast.Expr, ast.Assign)):
            reads = {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)}
            if not reads <= known | imported or not reads & (known | imported) - _SHOWN:
                return False
            called |= any(isinstance(n, ast.Call) for n in ast.walk(statement.value))
            if isinstance(statement, ast.Assign):
                known |= {n.id for target in statement.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        else:
            return False
    return bool(imported) and (called or all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in tree.body))


def _of_grader(module: str) -> bool:
    return module == "grader" or module.startswith("grader.")


def graded_definition(definers: list[int], counts: dict[int, int | None], function: str) -> tuple[int, str | None]:
    """Of the cells defining ``function`` (``definers``, in file order; at least one), the one
    whose definition is graded, and what the report says of it (None: nothing to say). ``counts``:
    every code cell's execution count (None: none shown)."""
    counted = [number for number in definers if counts.get(number) is not None]
    if counted:
        chosen = max(counted, key=lambda number: (counts[number], number))
    else:
        chosen = definers[-1]
    if not any(count is not None for count in counts.values()):  # never run, or every output cleared
        if len(definers) == 1:
            return chosen, None
        return chosen, (f"{function} is defined in {_cells(definers)} and the notebook shows no execution counts: "
                        f"cell {chosen}'s definition, the last, was graded, as Restart & Run All leaves it.")
    if not counted:
        which, show = (f"Cell {chosen}, which defines", "shows") if len(definers) == 1 else \
            (f"C{_cells(definers)[1:]}, which define", "show")
        return chosen, (f"{which} {function}, {show} no execution count while other cells do: not run since, or "
                        f"cleared. Cell {chosen}'s code as saved was graded; run it, save, and check again if that "
                        "is not your final version.")
    if len(definers) == 1:
        return chosen, None
    others = "the other ran before it" if len(definers) == 2 else "the others ran before it"
    if len(counted) < len(definers):
        others = "any other ran before it or not at all"
    return chosen, (f"{function} is defined in {_cells(definers, counts)}: cell {chosen}'s definition ran last "
                    f"(In [{counts[chosen]}]) and was graded, as your kernel held it; {others}.")


def check_before(checks: list[int], definers: list[int], counts: dict[int, int | None], function: str,
                 graded: int) -> str | None:
    """One line when a check cell ran before every definition of ``function`` (by execution
    counts where both have one, else by place in the file), naming ``graded``, the cell whose
    definition is graded; else None."""
    def earlier(check: int, definer: int) -> bool:
        if counts.get(check) is not None and counts.get(definer) is not None:
            return counts[check] < counts[definer]  # type: ignore[operator]
        return check < definer
    for check in checks:
        if definers and all(earlier(check, definer) for definer in definers):
            return (f"Cell {check}, the check cell, ran before cell {graded} defined {function}: in Jupyter, "
                    "run the check after the definition (jaxgrade check grades the whole notebook either way).")
    return None


def _cells(numbers: list[int], counts: dict[int, int | None] | None = None) -> str:
    def shown(number: int) -> str:
        if counts is None:
            return str(number)
        count = counts.get(number)
        return f"{number} (In [{count}])" if count is not None else f"{number} (not run)"
    listed = [shown(number) for number in numbers]
    if len(listed) == 1:
        return f"cell {listed[0]}"
    return f"cells {', '.join(listed[:-1])} and {listed[-1]}"
