"""Hypothesis strategies for exercise inputs, and the exact answers they are judged against.

Strategies are plain values: an exercise composes them (``float32_vectors(bound=1e3)``)
instead of writing generators. Lengths come from a small fixed set because every new
length costs a JAX compilation in the child; Hypothesis shrinks toward the first entries.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# Empty, one element, the smallest even and odd sums, a medium odd length and a long one.
# Each length costs every submission a trace and lowering in its child (15-60 ms even with
# the compilation cache): six, not nine, made class grading 14% cheaper in CPU. 7 is also the
# length of the seed exercises' PROBE, so the structure probe compiles nothing extra.
LENGTHS = (0, 1, 2, 3, 7, 64)
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


# -- arrays of any rank, and the exact answers of element-wise and axis-wise work ---------------
def float32_arrays(shapes: tuple[tuple[int, ...], ...], bound: float = 1e30) -> st.SearchStrategy[np.ndarray]:
    """float32 arrays whose shape is drawn from ``shapes`` (matrices for row or block sharding:
    choose shapes the mesh divides evenly, since JAX refuses to split 10 rows over 8 devices)."""
    return hnp.arrays(np.float32, st.sampled_from(shapes), elements=float32_elements(bound))


def exactly(x: np.ndarray) -> np.ndarray:
    """x itself: the answer of a task that only moves data (placing changes no value)."""
    return np.asarray(x, np.float32)


def no_tolerance(x: np.ndarray) -> float:
    """Moving or placing data must not change a single bit."""
    return 0.0


def exact_axis_sum(axis: int) -> "Callable[[np.ndarray], np.ndarray]":
    """Sums along ``axis``, each correctly rounded (float64 fsum of the float32 elements)."""
    def oracle(x: np.ndarray) -> np.ndarray:
        moved = np.moveaxis(np.asarray(x, np.float64), axis, -1)
        flat = moved.reshape(-1, moved.shape[-1]) if moved.size else np.zeros((int(np.prod(moved.shape[:-1])), 0))
        return np.array([math.fsum(row.tolist()) for row in flat], np.float64).reshape(moved.shape[:-1])
    return oracle


def float32_axis_sum_tolerance(axis: int) -> "Callable[[np.ndarray], np.ndarray]":
    """``float32_sum_tolerance`` for each of the sums along ``axis``."""
    def tolerance(x: np.ndarray) -> np.ndarray:
        n = x.shape[axis]
        magnitude = np.sum(np.abs(np.asarray(x, np.float64)), axis=axis)
        return n * (float(FLOAT32.eps) * magnitude + float(FLOAT32.tiny))
    return tolerance


def elementwise_tolerance(expected: "Callable[[np.ndarray], np.ndarray]",
                          ulps: float = 1.0) -> "Callable[[np.ndarray], np.ndarray]":
    """For one float32 rounding per element: ``ulps`` float32 epsilons of the exact answer,
    plus the smallest normal number (XLA flushes subnormal results to zero)."""
    def tolerance(x: np.ndarray) -> np.ndarray:
        return ulps * float(FLOAT32.eps) * np.abs(expected(x)) + float(FLOAT32.tiny)
    return tolerance
