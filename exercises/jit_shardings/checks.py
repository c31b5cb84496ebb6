"""Checks for jit_shardings, built from the grader's check library."""
import numpy as np

from grader.authoring import (Array, LoadsFunction, NamedShardingTarget, ResultSharding, Returns, Signature,
                              ValueProperty, Wording, WithinLimits, arguments, exact_axis_sum, float32_array,
                              float32_axis_sum_tolerance, placement_checks, shapes)

SIGNATURE = Signature({"x": Array("float32", "r c")}, returns=Array("float32", "c"))

# Structure is observed on this input: 16 rows, 3 columns, a shape no value test uses.
PROBE = {"x": np.arange(48, dtype=np.float32).reshape(16, 3) * 0.75 - 9.0}

# Rows a multiple of 8 (the mesh splits them), any number of columns: no rows, no columns, one column.
SHAPES = shapes("r c", (0, 3), (8, 0), (8, 1), (8, 4), (16, 5), (32, 2))

# x goes into the jitted function split by rows; its output comes back replicated.
# x itself enters the jit: the statement says not to place it with jax.device_put first.
INPUT = NamedShardingTarget(
    axis_names=("data",), spec=("data", None), via="jit_in", match="exact",
    also_accept={("data",): "PartitionSpec('data') splits the rows the same way."})
OUTPUT = NamedShardingTarget(axis_names=("data",), spec=(), via="jit_out", operand="result",
                             also_accept={(None,): "PartitionSpec(None) leaves a vector whole too."})

CHECKS = [
    LoadsFunction(),
    Returns(id="type.one_per_column", title="Returns a float32 JAX array with one entry per column",
                 hint="Sum over the rows (axis=0): one number per column."),
    ValueProperty(id="value.random_matrices", title="Sums the columns of random matrices correctly (Hypothesis)",
                  inputs=arguments(SHAPES, x=float32_array("r c", bound=1e30)), expected=exact_axis_sum(0),
                  tolerance=float32_axis_sum_tolerance(0),
                  hint="Each entry is the plain sum of one column over all rows."),
    *placement_checks(
        INPUT, "in",
        placed=Wording(id="structure.in_shardings",
                       hint="Pass in_shardings=NamedSharding(mesh, PartitionSpec('data', None)) to jax.jit and "
                            "call the jitted function on x; do not place x with jax.device_put yourself."),
        spec=Wording(title="in_shardings splits the rows: PartitionSpec('data', None)",
                     hint="The first entry of the spec is the rows. PartitionSpec() would replicate x."),
        from_placement=Wording(id="structure.sums_of_split_x",
                               title="The sums are computed from x as jax.jit splits it",
                               hint="Sum the argument the jitted function receives: not x captured from outside, "
                                    "not on the host (jax.pure_callback), not 0 times the sharded input.")),
    *placement_checks(
        OUTPUT, "out", mesh=None, from_placement=None,
        placed=Wording(id="structure.out_shardings",
                       hint="Pass out_shardings=NamedSharding(mesh, PartitionSpec()) to the same jax.jit."),
        spec=Wording(title="out_shardings replicates the result: PartitionSpec()",
                     hint="PartitionSpec() for the output: every device holds all the column sums.")),
    ResultSharding(id="structure.result_replicated", title="The returned sums are replicated over the mesh",
                   target=NamedShardingTarget(axis_names=("data",), spec=()),
                   hint="Return what the jitted function returns, without moving it."),
    WithinLimits(),
]
