"""Checks for row_max, this course's own exercise; its structure checks are shared with the
course's copy of shard_rows (course_helpers, named in jaxgrade.toml)."""
import numpy as np

from course_helpers import row_wise_checks
from grader.authoring import (Array, LoadsFunction, Returns, Signature, ValueProperty, WithinLimits, arguments,
                              exactly, float32_array, named, no_tolerance, shapes)

SIGNATURE = Signature({"x": Array("float32", "r c")}, returns=Array("float32", "r"))

# Structure is observed on this input: 16 rows (two per device), 8 columns, distinct values.
PROBE = {"x": np.arange(128, dtype=np.float32).reshape(16, 8) * 0.5 - 20.0}

# Rows in multiples of the 8 devices (JAX refuses uneven splits); at least one column (a row
# without entries has no maximum).
SHAPES = shapes("r c", (8, 1), (8, 5), (16, 3), (24, 2), (32, 7))


@named("x")
def row_maxima(x: np.ndarray) -> np.ndarray:
    """The largest entry of each row: a maximum rounds nothing, so float32 is exact."""
    return exactly(np.max(np.asarray(x, np.float32), axis=1))


CHECKS = [
    LoadsFunction(),
    Returns(id="type.one_per_row", title="Returns a float32 JAX array with one entry per row",
            hint="Reduce along axis 1 (across the columns): the result has one number per row."),
    ValueProperty(id="value.random_matrices", title="Finds the largest entry of each row of random matrices",
                  inputs=arguments(SHAPES, x=float32_array("r c", bound=1e30)), expected=row_maxima,
                  tolerance=no_tolerance,
                  hint="Each entry is the largest of one row (jnp.max(x, axis=1)): not the sum, not the mean."),
    *row_wise_checks("take the maximum of", "maxima"),
    WithinLimits(),
]
