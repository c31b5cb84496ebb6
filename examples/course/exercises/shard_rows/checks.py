"""Checks for shard_rows: the track's, copied in with `jaxgrade new --from shard_rows` and changed
here: its structure checks are this course's, shared with row_max (course_helpers)."""
import numpy as np

from course_helpers import row_wise_checks
from grader.authoring import (Array, Case, FixedCases, LoadsFunction, Returns, Signature, ValueProperty, WithinLimits,
                              arguments, exact_axis_sum, float32_array, float32_axis_sum_tolerance, shapes)

SIGNATURE = Signature({"x": Array("float32", "r c")}, returns=Array("float32", "r"))

# Structure is observed on this input: 16 rows (two per device), 8 columns (so a column split
# also runs and can be named), a shape no value test uses.
PROBE = {"x": np.arange(128, dtype=np.float32).reshape(16, 8) * 0.5 - 20.0}

# Every row count divides evenly over the 8 devices (JAX refuses uneven splits).
# No rows, no columns, one column, and rows in multiples of 8.
SHAPES = shapes("r c", (0, 4), (8, 0), (8, 1), (8, 5), (16, 3), (24, 2), (32, 7))

CHECKS = [
    LoadsFunction(),
    Returns(id="type.one_per_row", title="Returns a float32 JAX array with one entry per row",
                 hint="Sum along axis 1 (across the columns): the result has one number per row."),
    ValueProperty(id="value.random_matrices", title="Sums the rows of random matrices correctly (Hypothesis)",
                  inputs=arguments(SHAPES, x=float32_array("r c", bound=1e30)), expected=exact_axis_sum(1),
                  tolerance=float32_axis_sum_tolerance(1),
                  hint="Each entry is the plain sum of one row: every column counts, and sharding does not "
                       "change the numbers."),
    FixedCases(id="value.special_inputs", title="Sums rows holding NaN, infinities and float32 overflows correctly",
               cases=(Case(label="rows holding NaN, infinities and values whose sum overflows float32",
                           code={"x": "[[np.nan, 1.0], [np.inf, -np.inf], [np.inf, 1.0], [-np.inf, -2.0], "
                                      "[3e38, 3e38], [1.0, 2.0], [0.0, 0.0], [-3e38, -3e38]]"},
                           answer=np.array([np.nan, np.nan, np.inf, -np.inf, np.inf, 3.0, 0.0, -np.inf])),),
               expected=exact_axis_sum(1), tolerance=float32_axis_sum_tolerance(1),
               hint="Sum with jnp.sum: a NaN in a row makes its sum NaN, as in float32 arithmetic; jnp.nansum "
                    "would hide it."),
    *row_wise_checks("sum", "sums"),  # this course's wording, shared with row_max (course_helpers)
    WithinLimits(),
]
