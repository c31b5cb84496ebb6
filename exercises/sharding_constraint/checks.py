"""Checks for sharding_constraint, built from the grader's check library."""
import math

import numpy as np

from grader.authoring import (FLOAT32, Array, LoadsFunction, NamedShardingTarget, Returns, Signature, ValueProperty,
                              Wording, WithinLimits, arguments, float32_array, placement_checks, shapes)

SIGNATURE = Signature({"x": Array("float32", "r c")}, returns=Array("float32", "r"))

# Structure is observed on this input: 16 rows, 3 columns, a shape no value test uses.
PROBE = {"x": np.arange(48, dtype=np.float32).reshape(16, 3) * 0.5 - 11.0}

# No rows, no columns, one column, and rows in multiples of 8.
SHAPES = shapes("r c", (0, 3), (8, 0), (8, 1), (8, 4), (16, 5), (32, 2))

# A value computed from x (the squares), constrained inside jax.jit, split by rows.
TARGET = NamedShardingTarget(
    axis_names=("data",), spec=("data", None), via="constraint", match="derived", shaped_like="x", inside="jit",
    label="the squares", also_accept={("data",): "PartitionSpec('data') splits the rows the same way."})


def energies(x: np.ndarray) -> np.ndarray:
    """Each row's sum of squares, exactly (float64 squares of float32 values are exact)."""
    squares = np.asarray(x, np.float64) ** 2
    return np.array([math.fsum(row) for row in squares.tolist()], np.float64).reshape(x.shape[:1])


def energy_tolerance(x: np.ndarray) -> np.ndarray:
    """Each square rounds once in float32, then the row sum rounds n times."""
    n = x.shape[1]
    magnitude = np.sum(np.asarray(x, np.float64) ** 2, axis=1)
    return (n + 1) * (float(FLOAT32.eps) * magnitude + float(FLOAT32.tiny))


CHECKS = [
    LoadsFunction(),
    Returns(id="type.one_per_row", title="Returns a float32 JAX array with one entry per row",
            hint="Sum the squares along axis 1: one number per row."),
    ValueProperty(id="value.random_matrices", title="Sums the squares of each row correctly (Hypothesis)",
                  inputs=arguments(SHAPES, x=float32_array("r c", bound=1e15)), expected=energies, tolerance=energy_tolerance,
                  hint="Square each element, then sum each row: jnp.sum(y, axis=1) with y = m * m."),
    *placement_checks(
        TARGET,
        placed=Wording(id="structure.constrained",
                       title="The squares are constrained with with_sharding_constraint inside jax.jit",
                       hint="Inside the jitted function: y = jax.lax.with_sharding_constraint(m * m, sharding). "
                            "Outside jit, or with jax.device_put, nothing constrains the compiled program."),
        spec=Wording(title="The constraint splits the rows: PartitionSpec('data', None)",
                     hint="PartitionSpec('data', None): rows split over 'data', columns whole."),
        from_placement=Wording(id="structure.constraint_used",
                               title="The row sums are computed from the constrained value",
                               hint="with_sharding_constraint returns the constrained array: sum that one, not y.")),
    WithinLimits(),
]
