"""Checks for vmap_not_loop, built from the grader's check library.

One score per example, the dot product of the example's features with w, computed for the whole
batch at once: a Python loop over examples (eager, or unrolled while jax.jit traces it) grows
with the batch, and jax.lax.map runs the examples one after another. Values are judged against
exact dot products (float64 products of float32 values are exact; math.fsum adds them)."""
import math

import numpy as np

from grader.authoring import (FLOAT32, Array, AvoidsPrimitives, LoadsFunction, OperationCount, Returns, Signature,
                              UsesPrimitive, ValueProperty, WithinLimits, arguments, float32_array, shapes)

SIGNATURE = Signature({"xs": Array("float32", "b k"), "w": Array("float32", "k")}, returns=Array("float32", "b"))

# Distinct values, a batch size no value test uses.
PROBE = {"xs": (np.arange(6 * 4, dtype=np.float32).reshape(6, 4) * 0.5 - 5.0),
         "w": np.array([0.25, -1.5, 2.0, 0.75], np.float32)}


def exact(xs: np.ndarray, w: np.ndarray) -> np.ndarray:
    xs64, w64 = xs.astype(np.float64), w.astype(np.float64)
    return np.array([math.fsum((row * w64).tolist()) for row in xs64], np.float64).reshape(xs.shape[0])


def tolerance(xs: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A float32 dot product of length k: k products and k - 1 sums, each rounding by at most
    eps times the magnitude Σ|x||w|; XLA flushes subnormal results (tiny each)."""
    k = xs.shape[1]
    magnitude = np.abs(xs.astype(np.float64)) @ np.abs(w.astype(np.float64))
    return (k + 1) * (float(FLOAT32.eps) * magnitude + float(FLOAT32.tiny))


CHECKS = [
    LoadsFunction(),
    Returns(id="type.one_per_example", title="Returns a float32 JAX array with one score per example (b,)",
            hint="jax.vmap(score, in_axes=(0, None)) over the examples gives one score each."),
    ValueProperty(id="value.random_batches", title="Scores random batches correctly (Hypothesis)",
                  inputs=arguments(shapes("b k", (0, 3), (1, 1), (2, 5), (8, 3), (33, 2)),
                                   xs=float32_array("b k", bound=1e15), w=float32_array("k", bound=1e15)),
                  expected=exact, tolerance=tolerance,
                  hint="An example's score is the dot product of its row of xs with w."),
    # at_most: a vmapped score is a couple of operations (the variants: 2); a Python loop over a
    # batch padded to a fixed size never grows with the batch, yet is one dot per padded row
    OperationCount(id="structure.does_not_grow", title="The program does not grow with the batch",
                   grows_with={"xs": 0}, at_most=16,
                   hint="A Python loop over the examples runs (and traces) the score once per example: write it "
                        "for one example and jax.vmap it over the batch."),
    AvoidsPrimitives(id="structure.no_sequential_loop", title="The examples are not scored one after another",
                     operations=("scan", "while", "pure_callback", "io_callback", "pallas_call"),
                     why="jax.lax.map and fori_loop run the examples one after another (a scan or a while loop), "
                         "and a Pallas kernel over a grid of rows runs once per grid step; jax.vmap batches them "
                         "into one operation."),
    UsesPrimitive(id="structure.dot_reads_xs", title="One batched dot product reads xs", operation="dot_general",
                  reads="xs", hint="jnp.dot(x, w) inside the per-example function, vmapped over xs."),
    WithinLimits(),
]
