"""The package's shape: one folder per stage of the flow, and imports that only point down.

submission → sandbox (a confined child) → observe (what it did) → checks (judgements) →
exercise (the declarations: grader.authoring's lower modules) → report (the result and its
renderings) → engine (one grading; submission: a file, notebook or folder made ready for it)
→ batch and grader.authoring's validate, export, scaffold (many gradings, authoring, platforms)
→ cli, the warm service and the notebook check (which ask the service before grading themselves).
A package's modules may sit on different layers: a module's layer is its longest listed prefix.
A module may import its own layer or any layer below it, never one above, and no import
cycle exists even inside a layer (function-level imports included: they are still imports).
What runs inside the child (grader/child/) sits in the bottom layer and imports, of the grader,
only the wire (grader/wire.py, which both sides speak) and the errors.
"""
from __future__ import annotations

import ast
from pathlib import Path

GRADER = Path(__file__).resolve().parent.parent / "grader"

LAYERS = (
    ("grader", "grader.errors", "grader.outcome", "grader.xla_options", "grader.release", "grader.arguments", "grader.strategies",
     # a notebook read as Python (grader.notebook.convert, .runs) is a submission's source, as grader.source is
     "grader.source", "grader.notebook",
     # grader.child here too: grader.notebook.convert writes the cell table the child reads (grader.child.cells)
     "grader.cache", "grader.wire", "grader.child",
     # the witness runs beside the child, in a process of its own that runs no submission's code
     "grader.witness"),
    ("grader.sandbox",),
    ("grader.observe",),
    ("grader.checks",),
    # the instructor's package (grader.authoring): its modules sit on the layers their imports allow
    ("grader.authoring.exercise", "grader.authoring.course", "grader.authoring.lint", "grader.authoring.declarations",
     "grader.authoring.starter"),
    ("grader.report", "grader.notebook.display"),
    ("grader.engine", "grader.submission", "grader.notebook.kernel_cells"),
    ("grader.batch", "grader.authoring", "grader.authoring.validate", "grader.authoring.validated",
     "grader.authoring.scaffold", "grader.authoring.export"),
    # grader.notebook.check asks the warm service first, as the CLI does
    ("grader.cli", "grader.__main__", "grader.warm", "grader.notebook.check", "grader.notebook.warm_cells",
     "grader.pytest_plugin"),
)


def _module_name(path: Path) -> str:
    name = ".".join(path.relative_to(GRADER.parent).with_suffix("").parts)
    return name.removesuffix(".__init__")


def _imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in GRADER.rglob("*.py"):
        module = _module_name(path)
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "grader":
                if node.module == "grader":
                    targets.update(f"grader.{a.name}" if a.name != "__version__" else "grader" for a in node.names)
                else:
                    targets.add(node.module)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.split(".")[0] == "grader")
        found[module] = targets - {module}
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _layer(module: str) -> int:
    best = None
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if _within(module, prefix):
                if best is None or len(prefix) > best[1]:
                    best = (rank, len(prefix))
    assert best is not None, f"{module} belongs to no layer: add it to LAYERS in tests/test_layout.py"
    return best[0]


def test_every_import_points_down_or_sideways() -> None:
    upward = [f"{module} imports {target}" for module, targets in _imports().items() for target in targets
              if _layer(target) > _layer(module)]
    assert not upward, upward


def test_no_import_cycles() -> None:
    graph = _imports()

    def reaches(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for target in graph.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    assert not [m for m in graph if m in reaches(m)]


def test_errors_live_in_one_module() -> None:
    """Errors other modules raise or catch are defined in grader/errors.py only."""
    defined = [f"{_module_name(p)}.{node.name}" for p in GRADER.rglob("*.py") if p.name != "errors.py"
               for node in ast.walk(ast.parse(p.read_text()))
               if isinstance(node, ast.ClassDef) and any(getattr(b, "id", "").endswith(("Error", "Exception"))
                                                         for b in node.bases)]
    assert not defined, defined


CHILD_MAY_IMPORT = {"grader.wire", "grader.errors"}


def test_the_child_imports_only_the_wire_and_the_errors() -> None:
    """Everything under grader/child/ runs in the submission's process: of the grader it imports
    its own modules, the wire and the errors, nothing else, at any level of a module; and the
    wire, which the child imports, only the errors."""
    graph = _imports()
    outside = [f"{module} imports {target}" for module, targets in graph.items() if _within(module, "grader.child")
               for target in targets if not _within(target, "grader.child") and target not in CHILD_MAY_IMPORT]
    assert not outside, outside
    assert graph["grader.wire"] <= {"grader.errors"}, graph["grader.wire"]
