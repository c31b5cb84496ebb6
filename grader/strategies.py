"""Hypothesis strategies for exercise inputs, and the exact answers they are judged against.

Strategies are plain values: an exercise composes them (``float32_vectors(bound=1e3)``)
instead of writing generators. Lengths come from a small fixed set because every new
length costs a JAX compilation in the child; Hypothesis shrinks toward the first entries.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

LENGTHS = (0, 1, 2, 3, 5, 8, 13, 32, 64)
FLOAT32 = np.finfo(np.float32)


def float32_elements(bound: float = 1e30) -> st.SearchStrategy[float]:
    """Finite float32 values in [-bound, bound], mixing signs and magnitudes.
    The bound is rounded to a float32 so Hypothesis accepts it exactly."""
    limit = float(np.float32(bound))
    return st.floats(min_value=-limit, max_value=limit, width=32, allow_nan=False, allow_infinity=False)


def float32_vectors(lengths: tuple[int, ...] = LENGTHS, bound: float = 1e30) -> st.SearchStrategy[np.ndarray]:
    """One-dimensional float32 arrays with lengths drawn from ``lengths``."""
    return hnp.arrays(np.float32, st.sampled_from(lengths), elements=float32_elements(bound))


def exact_sum(x: np.ndarray) -> float:
    """The correctly rounded sum of the float32 elements, computed exactly in float64."""
    return math.fsum(np.asarray(x, np.float64).ravel().tolist())


def float32_sum_tolerance(x: np.ndarray) -> float:
    """How far a correct float32 sum may stray from the exact one: each of the n additions
    may round by eps·Σ|x|, and XLA's CPU backend flushes subnormals (< tiny each)."""
    n = x.size
    magnitude = math.fsum(np.abs(np.asarray(x, np.float64)).ravel().tolist())
    return n * (float(FLOAT32.eps) * magnitude + float(FLOAT32.tiny))
