"""What wrong variants are told: each message must say what the submission really did, not
only fail it (issue #12's corpus found these saying something false)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO
from grader import find_exercise, grade



def graded(path: Path, slug: str, tmp_path: Path):
    submission = tmp_path / path.name
    shutil.copyfile(path, submission)
    return grade(find_exercise(slug), submission)


def lost_points(report) -> list[str]:
    return [c.id for c in report.checks if c.score < c.max_score]


WRONG = REPO / "exercises" / "sharding_constraint" / "wrong"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["structure_outside_jit.py", "structure_constrains_jit_result_outside.py"])
def test_a_constraint_outside_jit_is_told_it_is_outside_jit(tmp_path, name):
    report = graded(WRONG / name, "sharding_constraint", tmp_path)
    message = next(c for c in report.checks if c.id == "structure.constrained").message
    assert report.score < report.max_score
    assert "unchanged copy" not in message and "outside jax.jit" in message, message


@pytest.mark.slow
def test_a_reshard_outside_jit_is_told_by_the_name_the_student_wrote(tmp_path):
    wrong = REPO / "exercises" / "fsdp_gather_params" / "wrong" / "structure_reshard_before_forward.py"
    report = graded(wrong, "fsdp_gather_params", tmp_path)
    told = [c.message for c in report.checks if "only outside jax.jit" in c.message]
    assert told and all("jax.sharding.reshard only outside jax.jit" in m for m in told), told
    assert not any("with_sharding_constraint only outside" in c.message for c in report.checks)


@pytest.mark.slow
def test_a_constraint_on_the_row_sums_is_told_it_is_not_on_the_squares(tmp_path):
    report = graded(WRONG / "structure_constrains_row_sums.py", "sharding_constraint", tmp_path)
    message = next(c for c in report.checks if c.id == "structure.constrained").message
    assert report.score < report.max_score
    assert "not to a value computed from x" not in message and "the squares" in message.split("Use ")[0], message


@pytest.mark.slow
def test_a_message_names_the_students_variable_as_written_and_capitalises_only_prose(tmp_path):
    report = graded(REPO / "exercises" / "sharded_matmul" / "wrong" / "structure_axis_name.py", "sharded_matmul",
                    tmp_path)
    spec = next(c for c in report.checks if c.score < c.max_score and "PartitionSpec('batch', None)" in c.message)
    assert spec.message.startswith("x is placed with PartitionSpec('batch', None)"), spec.message
    computed = [c.message for c in report.checks if "is computed from the placed" in c.message]
    assert computed and all(m.startswith("The result is computed") for m in computed), computed
