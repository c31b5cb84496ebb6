"""What the catalogue requires of every exercise, checked without grading anything.

``jaxgrade validate`` reports these before it grades, and the test suite asserts that every
exercise has none; docs/authoring.md ("What an exercise must have") states the same list in
words. Each problem is one line that names the file and what to change.
"""
from __future__ import annotations

import ast
from math import prod
from typing import Any

import numpy as np

from grader.arguments import argument_leaves, is_within
from grader.errors import ExerciseError
from grader.authoring.exercise import Exercise
from grader.outcome import CATEGORIES

MIN_WRONG, MIN_WRONG_STRUCTURE, MIN_RIGHT, MIN_STRUCTURE_CHECKS = 6, 2, 2, 3
SECTIONS = ("## Why it matters", "## Your task", "## Pitfalls")


def exercise_problems(exercise: Exercise) -> list[str]:
    """Everything ``exercise`` lacks of what the catalogue requires; empty when it is complete."""
    try:
        checks, signature, probe = exercise.checks, exercise.signature, exercise.probe
    except ExerciseError as error:
        return [str(error)]
    found = [*_metadata(exercise, checks), *_files(exercise, signature), *_variants(exercise),
             *_probe(probe, checks), *_checks(exercise, checks, signature, probe)]
    return [f"{exercise.slug}: {problem}" for problem in found]


def _metadata(exercise: Exercise, checks: list[Any]) -> list[str]:
    found = []
    if exercise.directory.name != exercise.slug:
        found.append(f"exercise.toml slug {exercise.slug!r} differs from its folder name {exercise.directory.name!r}")
    if exercise.devices < 1:
        found.append("devices must be at least 1")
    if any(points <= 0 for points in exercise.points.values()):
        found.append("every check in [points] must be worth more than 0")
    if [c.id for c in checks] != list(exercise.points):
        found.append("list the checks in [points] in the order CHECKS runs them (the report follows it)")
    for check in checks:
        if check.category not in CATEGORIES or check.id.split(".")[0] != check.category:
            found.append(f"check id {check.id!r} must start with its category ({check.category}.)")
    return found


def _files(exercise: Exercise, signature: Any) -> list[str]:
    found = []
    try:
        starter = ast.parse(exercise.starter.read_text())
        reference = ast.parse(exercise.reference.read_text())
        statement = exercise.statement
    except (OSError, SyntaxError) as error:
        return [f"starter.py, reference.py and statement.md must exist and parse ({error})"]
    docstring = ast.get_docstring(starter) or ""
    if "jaxgrade check THIS_FILE.py" not in docstring:
        found.append("starter.py's docstring must state the task and end with 'jaxgrade check THIS_FILE.py'")
    defined = [n for n in starter.body if isinstance(n, ast.FunctionDef) and n.name == exercise.function]
    if len(defined) != 1 or not any(isinstance(n, ast.Raise) for n in ast.walk(defined[0])):
        found.append(f"starter.py must define {exercise.function} raising NotImplementedError (not a solution)")
    if not any(isinstance(n, ast.FunctionDef) and n.name == exercise.function for n in reference.body):
        found.append(f"reference.py must define {exercise.function}")
    if not statement.startswith("# "):
        found.append("statement.md must start with a '# Title' line")
    found.extend(f"statement.md needs a '{s}' section" for s in SECTIONS if s not in statement)
    call = signature.call_text(exercise.function)
    if f"`{call}`" not in statement:
        found.append(f"statement.md must name the function as the student calls it: `{call}`")
    return found


def _variants(exercise: Exercise) -> list[str]:
    try:
        wrong, right = exercise.variants("wrong"), exercise.variants("right")
    except ExerciseError as error:
        return [str(error)]
    found = []
    kinds = [v.expect for v in wrong]
    if len(wrong) < MIN_WRONG or kinds.count("structure") < MIN_WRONG_STRUCTURE or "value" not in kinds:
        found.append(f"wrong/ needs at least {MIN_WRONG} variants, {MIN_WRONG_STRUCTURE} of them 'structure' and one "
                     f"'value' (has {len(wrong)}: {', '.join(sorted(set(map(str, kinds)))) or 'none'})")
    if len(right) < MIN_RIGHT:
        found.append(f"right/ needs at least {MIN_RIGHT} other correct solutions (has {len(right)})")
    for variant in wrong + right:
        text = variant.path.read_text()
        if variant.expect != "load":  # only a load mistake may fail to parse
            try:
                compile(text, str(variant.path), "exec")
            except SyntaxError as error:
                found.append(f"{variant.path.name} does not parse ({error.msg}, line {error.lineno})")
        if variant.expect is None and text.startswith("# expect:"):
            found.append(f"right/{variant.path.name} starts with '# expect:' (it belongs in wrong/)")
    return found


def _probe(probe: dict[str, Any], checks: list[Any]) -> list[str]:
    """PROBE's float arrays hold distinct values, so each block of a sharded array differs from
    the others and dataflow is unambiguous. Integer arrays are often indices or labels (the
    expert of each token, over 8 experts), which must repeat: they need distinct values only
    where a check's target places them, so that their blocks can be told apart."""
    placed = {target.operand for c in checks if (target := getattr(c, "target", None)) is not None}
    found = []
    for path, value in argument_leaves(probe):
        if not isinstance(value, np.ndarray) or value.size < 2 or len(np.unique(value)) == value.size:
            continue
        if value.dtype.kind == "f":
            found.append(f"PROBE's {path} repeats values; give it distinct ones (blocks must be told apart)")
        elif value.dtype.kind in "iu" and any(is_within(path, operand) for operand in placed):
            found.append(f"PROBE's {path} repeats values; give it distinct ones (a check's target places it, and "
                         "its blocks must be told apart; an integer array no target places may repeat)")
    return found


def _checks(exercise: Exercise, checks: list[Any], signature: Any, probe: dict[str, Any]) -> list[str]:
    from grader.checks import ValueProperty
    from grader.checks.shardings import blocks_of
    found = []
    if not any(isinstance(c, ValueProperty) for c in checks):
        found.append("CHECKS needs a ValueProperty (values drawn by Hypothesis)")
    if sum(c.category == "structure" for c in checks) < MIN_STRUCTURE_CHECKS:
        found.append(f"CHECKS needs at least {MIN_STRUCTURE_CHECKS} structure checks: the exercise is about what "
                     "the code does, not only the number")
    shapes = {path: np.shape(value) for path, value in argument_leaves(probe)}
    for check in checks:
        found.extend(check.problems(signature, probe))
        target = getattr(check, "target", None)
        if target is None:
            continue
        ids = target.device_ids(exercise.devices)
        if not ids:
            found.append(f"{check.id}: the target names no device of the {exercise.devices} simulated")
            continue
        if target.mesh_shape is not None and prod(target.mesh_shape) != len(ids):
            found.append(f"{check.id}: mesh_shape {target.mesh_shape} does not hold the {len(ids)} devices named")
            continue
        shape = shapes.get(target.operand)
        if shape is None:
            continue
        if len(target.spec) > len(shape):
            found.append(f"{check.id}: the spec {target.spec} is longer than PROBE's {target.operand} has dimensions")
        elif blocks_of(target.as_sharding(exercise.devices), tuple(shape)) is None:
            found.append(f"{check.id}: the spec {target.spec} names an axis not in {target.axis_names}")
        else:
            sizes = dict(zip(target.axis_names, target.mesh_shape or (len(ids),)))
            for n, entry in zip(shape, target.spec):
                count = prod(sizes[a] for a in ((entry,) if isinstance(entry, str) else entry or ()))
                if n % count:
                    found.append(f"{check.id}: PROBE's {target.operand} has shape {tuple(shape)}, which {target.spec} "
                                 "cannot split evenly; choose a probe the spec divides")
    return found
