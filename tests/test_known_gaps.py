"""Known gaps of the catalogue and of the grader's messages (issue #12's test corpus), as strict
xfails that say what goes wrong. Each XPASSes once fixed: then drop the marker (and move a
tests/gaps/ file to its exercise's wrong/).

- wrong submissions that get full marks (tests/gaps/): an edge the statement allows but the value
  strategy never draws, and a rule of the statement no check enforces;
- wrong variants in exercises/*/wrong/ that fail as they should, but with a message that says
  something false about what the submission did.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO
from grader import find_exercise, grade

GAPS = Path(__file__).resolve().parent / "gaps"


def graded(path: Path, slug: str, tmp_path: Path):
    submission = tmp_path / path.name
    shutil.copyfile(path, submission)
    return grade(find_exercise(slug), submission)


def lost_points(report) -> list[str]:
    return [c.id for c in report.checks if c.score < c.max_score]


@pytest.mark.xfail(strict=True, reason=(
    "domain gap: mesh_2d's statement allows empty matrices (rows divide by 2, columns by 4: 0 does) but "
    "checks.py's SHAPES draws none, because JAX 0.10.2 raises reading back an empty 2-D-sharded result on a "
    "jax.make_mesh (Explicit) mesh; a solution that crashes on 0 rows gets full marks"))
def test_a_solution_crashing_on_an_empty_matrix_loses_points_in_mesh_2d(tmp_path):
    report = graded(GAPS / "mesh_2d_crashes_on_empty.py", "mesh_2d", tmp_path)
    assert "value.random_matrices" in lost_points(report), lost_points(report)


@pytest.mark.xfail(strict=True, reason=(
    "statement rule without a check: jit_shardings says 'Do not place x with jax.device_put yourself', but "
    "in_shardings (match='copy') accepts a jit whose input is x's placed copy, and no check looks for a "
    "device_put of x"))
def test_placing_x_with_device_put_loses_points_in_jit_shardings(tmp_path):
    report = graded(GAPS / "jit_shardings_places_x_itself.py", "jit_shardings", tmp_path)
    assert any(c.startswith("structure.") for c in lost_points(report)), lost_points(report)


WRONG = REPO / "exercises" / "sharding_constraint" / "wrong"


@pytest.mark.xfail(strict=True, reason=(
    "false message: for a constraint applied to the squares outside jax.jit, structure.constrained says the "
    "constraint was applied 'to an unchanged copy of x' (the squares are no copy of x) instead of 'only "
    "outside jax.jit': in StructureCheck.nothing_placed, counts(p, leaf, dataclasses.replace(found)) still "
    "requires target.inside, so the 'outside' branch never runs, and relation 'copy' (any value of x's shape "
    "computed from x) is worded 'an unchanged copy'"))
@pytest.mark.parametrize("name", ["structure_outside_jit.py", "structure_constrains_jit_result_outside.py"])
def test_a_constraint_outside_jit_is_told_it_is_outside_jit(tmp_path, name):
    report = graded(WRONG / name, "sharding_constraint", tmp_path)
    message = next(c for c in report.checks if c.id == "structure.constrained").message
    assert report.score < report.max_score
    assert "unchanged copy" not in message and "outside jax.jit" in message, message


@pytest.mark.xfail(strict=True, reason=(
    "self-contradictory message: for a constraint on the row sums, structure.constrained says 'applied ... to a "
    "value computed from x of another shape than x, not to a value computed from x': the target's label (the "
    "squares) is replaced by the leaf name x in MATCH_TEXT"))
def test_a_constraint_on_the_row_sums_is_told_it_is_not_on_the_squares(tmp_path):
    report = graded(WRONG / "structure_constrains_row_sums.py", "sharding_constraint", tmp_path)
    message = next(c for c in report.checks if c.id == "structure.constrained").message
    assert report.score < report.max_score
    assert "not to a value computed from x" not in message and "the squares" in message.split("Use ")[0], message
