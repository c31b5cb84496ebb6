"""grader.checks.structure: "computed from the placed array" means the result follows it.

Graded through the real engine on files of tests/hostile/: a dead link (0 times the placed
array), the work done in NumPy or a host callback, honesty at the probe's length only, and a
mean taken in NumPy behind a real pmean each lose the check that names the work, with a
message that says what the function did; a correct training-loop style keeps full marks.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader import find_exercise, grade
from grader.report.result import Report

HOSTILE = Path(__file__).resolve().parent / "hostile"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    done: dict[tuple[str, str], Report] = {}

    def run(name: str, slug: str = "named_sharding_replicated") -> Report:
        if (name, slug) not in done:
            shutil.copyfile(HOSTILE / name, folder / name)
            done[(name, slug)] = grade(find_exercise(slug), folder / name)
        return done[(name, slug)]

    return run


def result(report: Report, check_id: str):
    return next(c for c in report.checks if c.id == check_id)


def assert_only_failure(report: Report, check_id: str, *says: str) -> None:
    failed = {c.id for c in report.checks if c.status != "passed"}
    assert check_id in failed and not any(c.status == "error" for c in report.checks), \
        [(c.id, c.status, c.message[:200]) for c in report.checks]
    message = result(report, check_id).message
    for text in says:
        assert text in message, message


@pytest.mark.slow
def test_a_dead_link_to_the_placed_array_fails_with_the_values_it_ignored(graded) -> None:
    report = graded("dead_link_zero_times.py")
    # found by the probe call's replay (its operations run again with other values placed)
    assert_only_failure(report, "structure.sum_of_placed", "does not follow the placed x",
                        "run again with the placed x holding other values", "0 * the placed")
    assert {c.id for c in report.checks if c.status != "passed"} == {"structure.sum_of_placed"}


@pytest.mark.slow
def test_a_sum_taken_in_numpy_fails_and_names_the_round_trip(graded) -> None:
    report = graded("host_sum_of_placed.py")
    assert_only_failure(report, "structure.sum_of_placed", "on the host", "pulled to NumPy")


@pytest.mark.slow
def test_honesty_only_at_the_probe_length_fails_on_another_input(graded) -> None:
    report = graded("honest_only_at_probe_length.py")
    assert_only_failure(report, "structure.sum_of_placed", "On another input", "does not follow the placed x")


@pytest.mark.slow
def test_a_loop_over_one_jitted_step_keeps_full_marks(graded) -> None:
    report = graded("honest_loop_over_jitted_step.py")
    assert report.score == report.max_score, [(c.id, c.status, c.message[:200]) for c in report.checks]


@pytest.mark.slow
def test_a_product_computed_by_a_host_callback_fails_in_sharded_matmul(graded) -> None:
    report = graded("matmul_pure_callback.py", "sharded_matmul")
    assert_only_failure(report, "structure.product_of_placed_x", "jax.pure_callback")


@pytest.mark.slow
def test_a_mean_taken_in_numpy_behind_a_zeroed_pmean_fails(graded) -> None:
    report = graded("pmean_times_zero_plus_host_mean.py", "pmean_gradients")
    failed = [c for c in report.checks if c.status == "failed"]
    assert failed and not any(c.status == "error" for c in report.checks)
    assert any("pulled to NumPy" in c.message for c in failed), [(c.id, c.message[:200]) for c in failed]


@pytest.mark.slow
def test_a_constraint_used_only_through_zero_inside_jit_fails_naming_the_replayed_program(graded) -> None:
    # the jitted program is run again equation by equation with the constrained value replaced
    report = graded("constraint_zero_weighted_inside_jit.py", "sharding_constraint")
    assert_only_failure(report, "structure.constraint_used", "your jitted function, run again with the squares",
                        "returns what it returned before")


@pytest.mark.slow
def test_a_traced_comparison_that_picks_the_original_in_every_ordinary_call_fails(graded) -> None:
    # The feeding call hands the placement other values, and the comparison picks the placed sum
    # there: it passed. The probe's replay holds every boolean at its value in the call.
    report = graded("picks_original_by_traced_comparison.py")
    assert_only_failure(report, "structure.sum_of_placed", "run again with the placed x holding other values")
