"""The exercise catalogue's static promises (no grading here: tests/test_validate.py grades).

Every exercise is complete and self-consistent: metadata, statement, a starter that states the
task and does not solve it, checks whose ids match the points, a probe the structure checks can
use, enough known-wrong variants of the kinds the course needs, and statements that do not give
the checks' internals away as code to copy.
"""
from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from grader.checks import (AvoidsPrimitives, MeshMatches, NamedShardingTarget, PlacedOnNamedSharding,
                           ResultSharding, ShardLayout, SpecMatches, UsesPrimitive, ValueProperty)
from grader.checks.layout import expected_blocks
from grader.checks.structure import StructureCheck
from grader.exercise import Exercise, all_exercises
from grader.outcome import CATEGORIES

EXERCISES = all_exercises()
IDS = [e.slug for e in EXERCISES]
SEED = "named_sharding_replicated"


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_metadata_is_consistent(exercise: Exercise) -> None:
    assert exercise.directory.name == exercise.slug
    assert exercise.signature.startswith(f"{exercise.function}(")
    assert exercise.devices >= 1
    assert exercise.max_score > 0 and all(points > 0 for points in exercise.points.values())
    ids = [c.id for c in exercise.checks]
    assert ids == list(exercise.points), "list [points] in the order the checks run"
    for check in exercise.checks:
        assert check.category in CATEGORIES and check.id.split(".")[0] == check.category, check.id


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_starter_states_the_task_and_does_not_solve_it(exercise: Exercise) -> None:
    tree = ast.parse(exercise.starter.read_text())
    docstring = ast.get_docstring(tree)
    assert docstring and "jaxgrade check THIS_FILE.py" in docstring
    [function] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == exercise.function]
    assert any(isinstance(n, ast.Raise) for n in ast.walk(function)), "the starter must not be a solution"
    reference = ast.parse(exercise.reference.read_text())
    assert any(isinstance(n, ast.FunctionDef) and n.name == exercise.function for n in reference.body)


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_statement_has_its_sections(exercise: Exercise) -> None:
    statement = exercise.statement
    assert statement.startswith("# ")
    for section in ("## Why it matters", "## Your task", "## Pitfalls"):
        assert section in statement, section
    assert f"`{exercise.function}(x)`" in statement


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_wrong_variants_cover_values_and_structure(exercise: Exercise) -> None:
    wrong = exercise.variants("wrong")
    categories = [v.expect for v in wrong]
    assert len(wrong) >= 5
    assert categories.count("structure") >= 2 and "value" in categories
    for variant in wrong + exercise.variants("right"):
        if variant.expect != "load":  # only a load mistake may fail to parse
            compile(variant.path.read_text(), str(variant.path), "exec")
    for variant in exercise.variants("right"):
        assert not variant.path.read_text().startswith("# expect:")


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_every_exercise_checks_values_and_structure(exercise: Exercise) -> None:
    checks = exercise.checks
    assert any(isinstance(c, ValueProperty) for c in checks)
    structural = (StructureCheck, UsesPrimitive, AvoidsPrimitives, ResultSharding, ShardLayout)
    assert sum(isinstance(c, structural) for c in checks) >= 3
    assert exercise.probe.dtype.name == "float32" and exercise.probe.size > 1


def _targets(exercise: Exercise) -> list[NamedShardingTarget]:
    return [c.target for c in exercise.checks if isinstance(c, (PlacedOnNamedSharding, MeshMatches, SpecMatches,
                                                               ResultSharding, ShardLayout))]


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_declared_targets_fit_the_devices_and_the_probe(exercise: Exercise) -> None:
    """A target that names more devices than the exercise simulates, or a mesh shape that does not
    hold them, or a probe the spec cannot split evenly, would make the reference fail."""
    for target in _targets(exercise):
        ids = target.device_ids(exercise.devices)
        assert ids, target
        if target.mesh_shape is not None:
            assert len(ids) == math.prod(target.mesh_shape)
        assert len(target.spec) <= exercise.probe.ndim or target.spec == ()
        layout = expected_blocks(target, exercise.devices, exercise.probe.shape)
        assert sorted(layout) == ids


def test_expected_blocks_follow_mesh_order_and_spec() -> None:
    grid = NamedShardingTarget(axis_names=("data", "model"), spec=("data", "model"), mesh_shape=(2, 4))
    layout = expected_blocks(grid, 8, (4, 8))
    assert layout[0] == ((0, 2), (0, 2)) and layout[3] == ((0, 2), (6, 8)) and layout[5] == ((2, 4), (2, 4))
    rows = NamedShardingTarget(axis_names=("data", "model"), spec=("data", None), mesh_shape=(2, 4))
    assert {expected_blocks(rows, 8, (4, 8))[d] for d in range(4)} == {((0, 2), (0, 8))}  # copies along 'model'
    both = NamedShardingTarget(axis_names=("data", "model"), spec=(("data", "model"),), mesh_shape=(2, 4))
    assert [expected_blocks(both, 8, (16,))[d] for d in range(8)] == [((2 * d, 2 * d + 2),) for d in range(8)]
    second_half = NamedShardingTarget(axis_names=("data",), spec=("data",), devices=(4, None))
    assert expected_blocks(second_half, 8, (8,)) == {4: ((0, 2),), 5: ((2, 4),), 6: ((4, 6),), 7: ((6, 8),)}
    replicated = NamedShardingTarget(axis_names=("data",), spec=(), devices=(None, 2))
    assert expected_blocks(replicated, 8, ()) == {0: (), 1: ()}


def test_targets_refuse_unknown_ways_and_operands() -> None:
    with pytest.raises(ValueError, match="via must be one of"):
        NamedShardingTarget(axis_names=("data",), via="teleport")
    with pytest.raises(ValueError, match="operand one of"):
        NamedShardingTarget(axis_names=("data",), operand="y")


def test_the_seed_exercise_is_still_in_the_catalogue() -> None:
    assert SEED in IDS
    assert Path(__file__).resolve().parent.parent.joinpath("docs", "authoring.md").is_file()
