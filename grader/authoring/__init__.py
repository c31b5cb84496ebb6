"""What serves the instructor, in one package: an exercise's format and its checks' vocabulary,
where a course's exercises come from, and the commands that write, prove and ship them.

    declarations   what an exercise's checks.py declares with (``from grader.authoring import
                   Array, Signature, ValueProperty, ...``: the checks, their targets, the
                   signature's pieces, the value checks' inputs and tolerances)
    exercise       an exercise folder: exercise.toml, statement, starter, checks, the key
    course         which exercise folders jaxgrade sees: JAXGRADE_EXERCISES, the course
                   (jaxgrade.toml, [tool.jaxgrade], --course) and the track it uses
    lint           everything an exercise must satisfy before it is validated
    starter        the student's starter file and notebook
    scaffold       jaxgrade new / new --from / init
    validate       jaxgrade validate and list; validated: its per-exercise verdict cache
    export         Gradescope, PrairieLearn, student pack, GitHub Classroom, GitLab CI

Every name below is imported on first use (PEP 562), from the module that defines it: the
grading stages import ``grader.authoring.exercise`` on every check, and must not pay for the
checks' vocabulary (NumPy, Hypothesis) or the exports; and the exports and validate sit above
the grading engine they drive (tests/test_layout.py), which this package's lower modules sit
below. ``validate`` and ``scaffold`` are this package's submodules, not re-exported functions
(``from grader.authoring.validate import validate``).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.authoring.course import COURSE_FILE, Course, choose_course, exercise_roots, find_course
    from grader.authoring.exercise import (Exercise, all_exercises, find_exercise, load_exercise, own_exercises,
                                           require_key)
    from grader.authoring.export import (export_github_classroom, export_gitlab_ci, export_gradescope,
                                         export_prairielearn, export_student)
    from grader.authoring.lint import exercise_problems
    from grader.authoring.scaffold import copy_in, init_course
    from grader.authoring.starter import starter_notebook, starter_text
    from grader.authoring.validate import ExerciseValidation, validated_seeds

_DECLARATIONS = (
    # the function's signature
    "Array", "Key", "Scalar", "Signature",
    # checks, and the targets structure checks judge
    "AnyOf", "AvoidsPrimitives", "Case", "CollectiveCount", "CommunicatesAtMost", "CompilesAtMost", "CyclicShift",
    "DeviceMemoryAtMost", "Donates", "FixedCases", "HoldsAtMostPerDevice", "LoadsFunction", "LoopLength",
    "LoopRuns", "MemoryGrowth",
    "MeshAxisTypes", "MeshMatches", "NamedShardingTarget", "Observed", "OperationCount", "Outcome",
    "PlacedAtMostPerDevice", "PlacedOnNamedSharding", "Predicate", "ResultFromPlacement", "ResultSharding", "Returns",
    "SameJit", "ShardLayout", "SpecMatches", "TypedSharding", "UsesCollective", "UsesPrimitive", "ValueProperty",
    "WhileReads", "WithinLimits", "Wording", "placement_checks",
    # inputs, oracles and tolerances
    "FLOAT32", "LENGTHS", "arguments", "dims", "elementwise_tolerance", "exact_axis_sum", "exact_matmul",
    "exact_sum", "exactly", "float32_array", "float32_axis_sum_tolerance", "float32_matmul_tolerance",
    "float32_sum_tolerance", "int_array", "keys", "named", "no_tolerance", "shapes", "tree",
)
# Each public name, and the module of this package that defines it.
_HOMES = {
    **dict.fromkeys(_DECLARATIONS, "declarations"),
    **dict.fromkeys(("COURSE_FILE", "Course", "choose_course", "exercise_roots", "find_course"), "course"),
    **dict.fromkeys(("Exercise", "all_exercises", "find_exercise", "load_exercise", "own_exercises", "require_key"),
                    "exercise"),
    **dict.fromkeys(("export_github_classroom", "export_gitlab_ci", "export_gradescope", "export_prairielearn",
                     "export_student"), "export"),
    "exercise_problems": "lint", "copy_in": "scaffold", "init_course": "scaffold",
    "starter_notebook": "starter", "starter_text": "starter",
    "ExerciseValidation": "validate", "validated_seeds": "validate",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'grader.authoring' has no attribute {name!r}")
    return getattr(importlib.import_module(f"grader.authoring.{_HOMES[name]}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
