"""grader.strategies: the inputs and exact answers value checks are built on, against real JAX."""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings

from grader.arguments import Array, Signature
from grader.checks import ValueProperty
from grader.errors import ExerciseError
from grader.strategies import (LENGTHS, arguments, dims, exact_axis_sum, exact_matmul, exact_sum, float32_array,
                               float32_bound,
                               float32_matmul_tolerance, float32_sum_tolerance, shapes, tree)

VECTORS = arguments(dims(n=LENGTHS), x=float32_array("n"))
MATMUL = arguments(dims(n=(0, 1, 8), k=(0, 1, 3), m=(1, 4)), x=float32_array("n k", bound=1e15),
                   w=float32_array("k m", bound=1e15))


@settings(max_examples=60, deadline=None, database=None)
@given(VECTORS.strategy())
def test_jax_float32_sums_lie_within_the_tolerance(args):
    x = args["x"]
    got = float(jnp.sum(jnp.asarray(x)))
    assert abs(got - exact_sum(x)) <= float32_sum_tolerance(x)


@settings(max_examples=60, deadline=None, database=None)
@given(VECTORS.strategy())
def test_vectors_are_float32_with_allowed_lengths_and_never_overflow(args):
    x = args["x"]
    assert x.dtype == np.float32 and x.ndim == 1 and x.size in LENGTHS
    assert np.all(np.isfinite(x)) and math.isfinite(exact_sum(x))


@settings(max_examples=60, deadline=None, database=None)
@given(MATMUL.strategy())
def test_related_shapes_agree_and_jax_matmul_lies_within_the_tolerance(args):
    x, w = args["x"], args["w"]
    assert x.shape[1] == w.shape[0]
    got = np.asarray(jnp.matmul(jnp.asarray(x), jnp.asarray(w)), np.float64)
    assert np.all(np.abs(got - exact_matmul(x, w)) <= float32_matmul_tolerance(x, w))


def test_independent_dimensions_cover_every_size_first():
    covering = dims(n=(0, 1, 8), k=(0, 3)).covering()
    assert {c["n"] for c in covering} == {0, 1, 8} and {c["k"] for c in covering} == {0, 3}
    assert len(covering) == 3


def test_joint_shapes_are_drawn_first_each_once():
    declared = shapes("r c", (0, 4), (8, 0), (8, 1))
    assert declared.covering() == [{"r": 0, "c": 4}, {"r": 8, "c": 0}, {"r": 8, "c": 1}]
    with pytest.raises(ExerciseError, match="one size per name"):
        shapes("r c", (0,))


@settings(max_examples=20, deadline=None, database=None)
@given(arguments(dims(k=(1, 2), m=(3,)), params=tree(dense=tree(kernel=float32_array("k m"),
                                                                 bias=float32_array("m")))).strategy())
def test_pytrees_of_parameters_share_their_dimensions(args):
    dense = args["params"]["dense"]
    assert dense["kernel"].shape[1] == dense["bias"].shape[0] == 3


def test_bounds_beyond_float32_are_exercise_errors():
    with pytest.raises(ExerciseError, match="not representable in float32"):
        float32_array("n", bound=1e39)
    assert float32_bound(1e30) <= 1e30 and float(np.float32(float32_bound(1e30))) == float32_bound(1e30)


def test_an_array_naming_an_undeclared_dimension_is_an_exercise_error():
    check = ValueProperty(id="value.v", title="v", inputs=arguments(dims(n=(1,)), x=float32_array("n q")))
    with pytest.raises(ExerciseError, match="does not declare"):
        check.draw(0)


def test_exact_sum_is_exact_where_float32_is_not():
    x = np.array([1e8, 1.0, -1e8], np.float32)
    assert exact_sum(x) == 1.0
    assert float32_sum_tolerance(x) > 0


def test_a_wrong_sum_falls_outside_the_tolerance():
    x = np.array([1.5, 2.25, -0.5], np.float32)
    assert abs((exact_sum(x) - 1.5) - exact_sum(x)) > float32_sum_tolerance(x)
    assert float32_sum_tolerance(np.array([], np.float32)) == 0.0


def test_library_oracles_apply_to_the_parameter_they_are_given_by_name():
    grads = np.array([1.0, 2.0, 3.5], np.float32)
    assert exact_sum.of("grads")(grads=grads, lr=0.1) == 6.5  # other parameters are left alone
    assert exact_sum(x=grads, lr=0.1) == 6.5 and exact_sum(grads) == 6.5
    rows = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(exact_axis_sum(1, of="m")(m=rows), [3.0, 12.0])
    np.testing.assert_array_equal(exact_matmul.of("a", "b")(a=rows, b=rows.T), rows.astype(np.float64) @ rows.T)


def test_an_oracle_on_a_parameter_the_function_lacks_is_an_author_error_naming_the_fix():
    with pytest.raises(ExerciseError, match=r"exact_sum reads the parameter 'x'.*exact_sum.of\('grads'\)"):
        exact_sum(grads=np.ones(3, np.float32))
    check = ValueProperty(id="value.sums", title="Sums", inputs=arguments(dims(n=LENGTHS), grads=float32_array("n")))
    signature = Signature({"grads": Array("float32", "n")}, returns=Array("float32", ()))
    problems = check.problems(signature, {"grads": np.ones(3, np.float32)})
    assert any("exact_sum reads the parameter 'x'" in p and "exact_sum.of(...)" in p for p in problems), problems
    fixed = ValueProperty(id="value.sums", title="Sums", inputs=arguments(dims(n=LENGTHS), grads=float32_array("n")),
                          expected=exact_sum.of("grads"), tolerance=float32_sum_tolerance.of("grads"))
    assert fixed.problems(signature, {"grads": np.ones(3, np.float32)}) == []
