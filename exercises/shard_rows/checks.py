"""Checks for shard_rows, built from the grader's check library."""
import numpy as np

from grader.authoring import (Array, Case, FixedCases, LoadsFunction, NamedShardingTarget, ResultSharding, Returns,
                              Signature, ValueProperty, Wording, WithinLimits, arguments, exact_axis_sum,
                              float32_array, float32_axis_sum_tolerance, placement_checks, shapes)

SIGNATURE = Signature({"x": Array("float32", "r c")}, returns=Array("float32", "r"))

# Structure is observed on this input: 16 rows (two per device), 8 columns (so a column split
# also runs and can be named), a shape no value test uses.
PROBE = {"x": np.arange(128, dtype=np.float32).reshape(16, 8) * 0.5 - 20.0}

# Every row count divides evenly over the 8 devices (JAX refuses uneven splits).
# No rows, no columns, one column, and rows in multiples of 8.
SHAPES = shapes("r c", (0, 4), (8, 0), (8, 1), (8, 5), (16, 3), (24, 2), (32, 7))

TARGET = NamedShardingTarget(
    axis_names=("data",), spec=("data", None), match="exact",
    also_accept={("data",): "PartitionSpec('data') splits the rows the same way; writing the trailing None "
                            "says explicitly that columns stay whole."})
RESULT = NamedShardingTarget(axis_names=("data",), spec=("data",))

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
    *placement_checks(
        TARGET, mesh_note="every device, one axis named 'data'",
        placed=Wording(hint="Place the matrix x first, then sum the placed matrix."),
        spec=Wording(title="The spec is PartitionSpec('data', None): rows split, columns whole",
                     hint="The first entry of the spec is the rows: PartitionSpec('data', None). PartitionSpec() "
                          "replicates, and PartitionSpec(None, 'data') splits the columns."),
        from_placement=Wording(id="structure.sum_of_placed", title="The sums are computed from the placed matrix",
                               hint="Sum the array jax.device_put returned, not the original x; place before "
                                    "summing.")),
    ResultSharding(id="structure.result_sharded", title="The row sums stay split along 'data'", target=RESULT,
                   hint="A row-wise sum of a row-split matrix stays split by rows: return it as JAX computed it."),
    WithinLimits(),
]
