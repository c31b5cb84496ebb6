"""The naive baseline: how course staff grade JAX exercises today, one submission at a time.

One fresh Python process per submission runs this file under pytest
(``SUBMISSION=path/to/student.py python -m pytest -q test_submission.py``): it imports the
student's module in-process (no sandbox), and runs the same Hypothesis property (the same
strategy, 100 examples, seed 0) and the same special inputs as jaxgrade's value checks,
asserting the sum. It checks values only: structure (where the array was placed) is what
such test files usually cannot see. Used by bench/batch_bench.py for the speed comparison.
"""
from __future__ import annotations

import importlib.util
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, seed, settings

from grader.strategies import LENGTHS, arguments, dims, exact_sum, float32_array, float32_sum_tolerance

spec = importlib.util.spec_from_file_location("student", os.environ["SUBMISSION"])
student = importlib.util.module_from_spec(spec)
spec.loader.exec_module(student)
f = student.replicated_sharding_value


def close_enough(got: object, x: np.ndarray, expected: float) -> bool:
    value = float(np.asarray(got))
    if math.isnan(expected):
        return math.isnan(value)
    if math.isinf(expected):
        return value == expected
    return abs(value - expected) <= float32_sum_tolerance(x)


@seed(0)
@settings(max_examples=100, deadline=None, database=None)
@given(arguments(dims(n=LENGTHS), x=float32_array("n", bound=1e30)).strategy())
def test_sums_random_vectors(arguments: dict[str, np.ndarray]) -> None:
    x = arguments["x"]
    got = f(jnp.asarray(x))
    assert isinstance(got, jax.Array) and got.shape == () and got.dtype == jnp.float32
    assert close_enough(got, x, exact_sum(x))


@pytest.mark.parametrize("x, expected", [
    (np.zeros(0, np.float32), 0.0),
    (np.random.default_rng(7).uniform(-1e3, 1e3, 100_000).astype(np.float32), None),
    (np.array([np.nan], np.float32), math.nan),
    (np.array([np.inf, -np.inf], np.float32), math.nan),
    (np.array([np.inf, 1.0], np.float32), math.inf),
    (np.array([3e38, 3e38], np.float32), math.inf),
])
def test_special_inputs(x: np.ndarray, expected: float | None) -> None:
    assert close_enough(f(jnp.asarray(x)), x, exact_sum(x) if expected is None else expected)
