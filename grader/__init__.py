"""jaxgrade: grade what a JAX submission did, not only what it returned.

The public API: ``check()`` in a notebook's cell grades what its kernel ran; ``grade`` one submission (a ``.py`` file, a notebook or a folder, as ``jaxgrade
check`` takes it) against an ``Exercise`` (found with ``find_exercise``) into a ``Report``, which
shows itself in a notebook, and ``render`` it. Names are imported on first use,
so the sandboxed child, which imports this package too, starts without them.
"""
from __future__ import annotations

import time
from importlib import import_module
from typing import Any

STARTED_AT = time.monotonic()  # the package's first lines here: the parent's imports count from it (grader.timings)

__version__ = "0.1.0"
# pyproject.toml's dependencies, named as pip and as ``import`` name them alike: what a pack pins
# (grader.authoring.export.pack) and what a crash names as missing from the install (grader.cli).
DEPENDENCIES = ("jax", "jaxlib", "numpy", "hypothesis", "jinja2", "nbformat", "rich", "flatbuffers", "datasketch")

_EXPORTS = {
    "grade": "grader.submission", "check": "grader.notebook.check",
    "Exercise": "grader.authoring.exercise", "ExerciseError": "grader.errors", "find_exercise": "grader.authoring.exercise",
    "all_exercises": "grader.authoring.exercise", "load_exercise": "grader.authoring.exercise",
    "Report": "grader.report.result", "CheckResult": "grader.report.result",
    "Limits": "grader.sandbox.limits",
    "render": "grader.report.render",
    # What a test runner needs (grader.pytest_plugin): which exercise a file is for, the checks a
    # student sees, each check's explanation, and the user's mistakes (said in one line).
    "exercise_of": "grader.submission", "read_submission": "grader.submission",
    "shown_checks": "grader.report.visibility", "explained": "grader.report.render", "UsageError": "grader.errors",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'grader' has no attribute {name!r}")
