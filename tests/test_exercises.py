"""The exercise catalogue's static promises, and what an author's mistakes look like.

Every exercise has none of the problems ``grader.authoring.lint.exercise_problems`` (grader/authoring/lint.py) looks for:
docs/authoring.md, "What an exercise must have", lists the same requirements, and
``jaxgrade validate`` reports them. No grading here: tests/test_validate.py grades.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.checks import NamedShardingTarget
from grader.checks.layout import expected_blocks
from grader.errors import ExerciseError
from grader.authoring.exercise import Exercise, all_exercises, find_exercise, load_exercise
from grader.authoring.lint import exercise_problems

EXERCISES = all_exercises()
IDS = [e.slug for e in EXERCISES]
SEED = "named_sharding_replicated"
REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_every_exercise_has_everything_the_catalogue_requires(exercise: Exercise) -> None:
    assert exercise_problems(exercise) == []


def test_the_requirements_are_written_down_for_authors() -> None:
    authoring = (REPO / "docs" / "authoring.md").read_text()
    assert "## What an exercise must have" in authoring
    for phrase in ("jaxgrade check THIS_FILE.py", "## Why it matters", "distinct values", "right/", "wrong/"):
        assert phrase in authoring, phrase


@pytest.fixture
def broken(tmp_path: Path):
    """A copy of the seed exercise with one file replaced; returns the loaded copy."""
    def make(name: str, edit) -> Exercise:
        directory = tmp_path / SEED
        if directory.exists():
            shutil.rmtree(directory)
        shutil.copytree(REPO / "exercises" / SEED, directory)
        path = directory / name
        path.write_text(edit(path.read_text()))
        return load_exercise(directory)
    return make


@pytest.mark.parametrize("name, edit, message", [
    ("checks.py", lambda t: t.replace('PROBE = {"x": np.array(', 'PROBE = {"y": np.array('),
     "PROBE name ['y']; the signature declares ['x']"),
    ("checks.py", lambda t: t.replace("dtype=np.float32)}", "dtype=np.float64)}", 1), "x has dtype float64"),
    ("checks.py", lambda t: t.replace('float32_array("n", bound=1e30)', 'float32_array("n", bound=1e39)'),
     "bound=1e+39 is not representable in float32"),
    ("checks.py", lambda t: t.replace("SIGNATURE = ", "SIGNATURE_ = "), "must define SIGNATURE"),
    ("checks.py", lambda t: t.replace("CHECKS = [", "CHECKS = [1 / 0,"), "checks.py, line"),
    ("exercise.toml", lambda t: t.replace('function = "', 'signature = "f(x: jax.Array) -> int"\nfunction = "'),
     "disagrees with checks.py's SIGNATURE"),
])
def test_author_mistakes_are_one_line_exercise_errors(broken, name, edit, message) -> None:
    exercise = broken(name, edit)
    problems = exercise_problems(exercise)
    assert any(message in p for p in problems), problems
    assert all("\n" not in p and "Traceback" not in p for p in problems)


def test_a_target_naming_no_parameter_is_reported(broken) -> None:
    exercise = broken("checks.py", lambda t: t.replace("axis_names=(\"data\",), spec=(), devices=(None, 1),",
                                                       "axis_names=(\"data\",), spec=(), devices=(None, 1), operand=\"w\","))
    assert any("operand 'w' names no parameter" in p for p in exercise_problems(exercise))


def test_too_few_variants_and_a_repeating_probe_are_reported(broken, tmp_path) -> None:
    exercise = broken("checks.py", lambda t: t.replace("[2.0, -1.0, 4.0, 0.5", "[2.0, 2.0, 4.0, 0.5"))
    for variant in list((exercise.directory / "right").glob("*.py"))[1:]:
        variant.unlink()
    problems = exercise_problems(exercise)
    assert any("repeats values" in p for p in problems) and any("right/ needs at least 2" in p for p in problems)


@pytest.mark.parametrize("placed", [False, True])
def test_an_integer_index_array_may_repeat_values_unless_a_target_places_it(broken, placed: bool) -> None:
    def edit(text: str) -> str:
        text = text.replace('Signature({"x": Array("float32", "n")}', 'Signature({"x": Array("float32", "n"), '
                                                                     '"ids": Array("int32", "n")}')
        text = text.replace("dtype=np.float32)}", "dtype=np.float32), "
                                                  "\"ids\": np.array([0, 3, 3, 1, 0, 7, 7], dtype=np.int32)}")
        return text.replace("devices=(None, 1),", 'devices=(None, 1), operand="ids",') if placed else text
    problems = exercise_problems(broken("checks.py", edit))
    assert not any("PROBE name" in p or "PROBE's x" in p for p in problems), problems
    about_ids = [p for p in problems if "PROBE's ids" in p]
    assert len(about_ids) == placed and all("repeats values" in p and "a check's target places it" in p
                                            for p in about_ids), problems


def test_a_probe_giving_two_returned_axes_one_size_is_reported(tmp_path) -> None:
    """On a square probe a transposed product has the declared shape: Returns could not see it."""
    directory = tmp_path / "matmul_2d"
    shutil.copytree(REPO / "exercises" / "matmul_2d", directory)
    checks = directory / "checks.py"
    checks.write_text(checks.read_text().replace("reshape(16, 4) * 0.25 - 7.5", "reshape(8, 8)[:, :4] * 0.25 - 7.5"))
    problems = exercise_problems(load_exercise(directory))
    assert any("type.product_shape: PROBE gives result's axes 'n' and 'm' the same size (8)" in p for p in problems)


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


def test_targets_refuse_unknown_ways_and_matches() -> None:
    with pytest.raises(ValueError, match="via must be one of"):
        NamedShardingTarget(axis_names=("data",), via="teleport")
    with pytest.raises(ValueError, match="match one of"):
        NamedShardingTarget(axis_names=("data",), match="roughly")


def test_the_seed_exercise_is_still_in_the_catalogue() -> None:
    assert SEED in IDS
    with pytest.raises(ExerciseError, match="unknown exercise"):
        from grader.authoring.exercise import find_exercise
        find_exercise("no_such_exercise")


def test_a_misspelt_slug_is_answered_with_the_close_ones() -> None:
    with pytest.raises(ExerciseError, match=r"^unknown exercise 'named_sharding_replcated': did you mean "
                                            r"named_sharding_replicated\? \(jaxgrade list shows them all\)$"):
        find_exercise("named_sharding_replcated")
    with pytest.raises(ExerciseError, match=r"^unknown exercise 'zzz'; known exercises: data_parallel_train_step, "):
        find_exercise("zzz")
