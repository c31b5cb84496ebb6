"""Checks for reduce_scatter_grads, built from the grader's check library.

Eight devices each hold one gradient (a row of grads); the task is their sum, left split over
the devices: each keeps the sum of its 1/8 slice, which is what a ``psum_scatter`` computes,
moving 1/8 of what an all-reduce (``psum``) followed by a slice moves. Values are judged against
exact sums along the device axis."""
import numpy as np

from grader.authoring import (AvoidsPrimitives, Array, CommunicatesAtMost, LoadsFunction, NamedShardingTarget,
                              PlacedOnNamedSharding, ResultSharding, Returns, Signature, UsesCollective, UsesPrimitive,
                              ValueProperty, WithinLimits, arguments, dims, exact_axis_sum, float32_array,
                              float32_axis_sum_tolerance)

DEVICES = 8
SIGNATURE = Signature({"grads": Array("float32", (DEVICES, "n"))}, returns=Array("float32", "n"))

# Distinct values, 16 entries per gradient (2 per device after the scatter), a length no value test uses.
PROBE = {"grads": (np.arange(DEVICES * 16, dtype=np.float32).reshape(DEVICES, 16) * 0.25 - 12.0)}

MESH = dict(axis_names=("data",), devices=(None, None))
GRADS_IN = NamedShardingTarget(**MESH, spec=("data",), via="shard_map_in", operand="grads",
                               also_accept={("data", None): "PartitionSpec('data', None) splits the rows the same way."})
RESULT = NamedShardingTarget(**MESH, spec=("data",), operand="result")

CHECKS = [
    LoadsFunction(),
    Returns(id="type.like_a_gradient", title="Returns a float32 JAX array shaped like one gradient (n,)",
            hint="With tiled=True (or out_specs concatenating the slices) the result is one gradient long."),
    ValueProperty(id="value.random_gradients", title="Sums random gradients correctly (Hypothesis)",
                  inputs=arguments(dims(n=(8, 24, 64)), grads=float32_array((DEVICES, "n"), bound=1e30)),
                  expected=exact_axis_sum(0, of="grads"), tolerance=float32_axis_sum_tolerance(0, of="grads"),
                  hint="The result is the sum of the eight gradients, entry by entry (not their mean)."),
    PlacedOnNamedSharding(id="structure.shard_map", title="Each device gets one gradient: shard_map over 'data'",
                          target=GRADS_IN,
                          hint="jax.shard_map(f, mesh=Mesh(np.array(jax.devices()), ('data',)), "
                               "in_specs=PartitionSpec('data'), out_specs=PartitionSpec('data'))."),
    UsesPrimitive(id="structure.reduce_scatter", title="A psum_scatter over 'data' sums and splits in one collective",
                  operation="psum_scatter", axes=("data",), inside="shard_map",
                  hint="Inside the per-device function: jax.lax.psum_scatter(g[0], 'data', scatter_dimension=0, "
                       "tiled=True)."),
    AvoidsPrimitives(id="structure.no_all_reduce", title="No all-reduce or all-gather of the whole gradient",
                     operations=("psum", "all_gather"),
                     why="An all-reduce (or gathering every gradient) moves the whole gradient to every device, "
                         "8 times what each keeps; psum_scatter moves only each device's slice."),
    UsesCollective(id="structure.compiled_reduce_scatter", title="XLA runs a reduce-scatter, no all-reduce or all-gather",
                   kind="reduce-scatter", instead_of=("all-reduce", "all-gather"),
                   hint="What XLA compiles is what moves: a psum_scatter inside shard_map, with out_specs that keep "
                        "the result split (a replicated result makes XLA gather it)."),
    # Each device keeps 1/8 of one gradient, itself 1/8 of grads: a reduce-scatter moves 1/64 of grads per device.
    CommunicatesAtMost(id="structure.traffic", title="Moves no more than each device's slice of the sum",
                       of="grads", fraction=1 / 64,
                       hint="One psum_scatter, once: every other collective (a second one, a gather afterwards) adds "
                            "traffic."),
    ResultSharding(id="structure.result_split", title="The sum is returned split over 'data'", target=RESULT,
                   hint="Return shard_map's result as it is, with out_specs=PartitionSpec('data'): each device "
                        "holds its own slice of the sum."),
    WithinLimits(),
]
