"""grader.strategies: the inputs and exact answers value checks are built on, against real JAX."""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings

from grader.strategies import LENGTHS, exact_sum, float32_sum_tolerance, float32_vectors


@settings(max_examples=60, deadline=None, database=None)
@given(float32_vectors())
def test_jax_float32_sums_lie_within_the_tolerance(x):
    got = float(jnp.sum(jnp.asarray(x)))
    assert abs(got - exact_sum(x)) <= float32_sum_tolerance(x)


@settings(max_examples=60, deadline=None, database=None)
@given(float32_vectors())
def test_vectors_are_float32_with_allowed_lengths_and_never_overflow(x):
    assert x.dtype == np.float32 and x.ndim == 1 and x.size in LENGTHS
    assert np.all(np.isfinite(x)) and math.isfinite(exact_sum(x))


def test_exact_sum_is_exact_where_float32_is_not():
    x = np.array([1e8, 1.0, -1e8], np.float32)
    assert exact_sum(x) == 1.0
    assert float32_sum_tolerance(x) > 0


def test_a_wrong_sum_falls_outside_the_tolerance():
    x = np.array([1.5, 2.25, -0.5], np.float32)
    assert abs((exact_sum(x) - 1.5) - exact_sum(x)) > float32_sum_tolerance(x)
    assert float32_sum_tolerance(np.array([], np.float32)) == 0.0
