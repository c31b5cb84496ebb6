"""Checks for shard_map_psum, built from the grader's check library."""
import numpy as np

from grader.authoring import (Array, LoadsFunction, NamedShardingTarget, ResultSharding, Returns, Signature,
                              SpecMatches, UsesPrimitive, ValueProperty, Wording, WithinLimits, arguments, dims,
                              float32_array, placement_checks)

SIGNATURE = Signature({"x": Array("float32", "n")}, returns=Array("float32", ()))

# Structure is observed on this input: 16 elements (two per device), distinct values.
PROBE = {"x": np.array([2.0, -1.0, 4.0, 0.5, -3.25, 7.0, 1.5, 6.0, -2.5, 3.0, 9.0, -4.0, 0.25, 5.5, -6.0, 8.0],
                       dtype=np.float32)}

# x enters shard_map split over 'data' (one block per device).
TARGET = NamedShardingTarget(axis_names=("data",), spec=("data",), via="shard_map_in")
# The total comes out of shard_map with out_specs=PartitionSpec(): one copy on every device,
# and it is returned so (not moved to one device, not picked out of per-device copies).
RESULT_OUT = NamedShardingTarget(axis_names=("data",), spec=(), via="shard_map_out", operand="result",
                                 also_accept={(None,): "PartitionSpec(None) replicates too."})
RESULT = NamedShardingTarget(axis_names=("data",), spec=(), operand="result")

CHECKS = [
    LoadsFunction(),
    Returns(id="type.float32_scalar", title="Returns a float32 JAX array of shape ()",
                 hint="Return the psum'd total as shard_map gives it back: out_specs=PartitionSpec() makes it a "
                      "scalar."),
    ValueProperty(id="value.random_vectors", title="Sums random vectors correctly (Hypothesis)",
                  inputs=arguments(dims(n=(0, 8, 16, 24, 64)), x=float32_array("n", bound=1e30)),
                  hint="The total is the plain sum of x: psum adds the partial sums (pmean would average them)."),
    *placement_checks(
        TARGET,
        placed=Wording(id="structure.shard_map",
                       hint="Call jax.shard_map(f, mesh=mesh, in_specs=PartitionSpec('data'), "
                            "out_specs=PartitionSpec()) on x."),
        spec=Wording(id="structure.in_spec", title="in_specs gives each device a block: PartitionSpec('data')",
                     hint="in_specs=PartitionSpec('data') splits x; PartitionSpec() copies all of it to every device."),
        from_placement=Wording(id="structure.total_of_blocks",
                               title="The total is computed from the blocks shard_map hands out",
                               hint="Sum each device's block inside shard_map and psum those sums: not x captured "
                                    "from outside, not on the host, not 0 times the psum.")),
    UsesPrimitive(id="structure.psum", title="A psum over 'data' inside shard_map combines the partial sums",
                  operation="psum", axes=("data",), inside="shard_map",
                  hint="Inside the per-device function: jax.lax.psum(jnp.sum(block), 'data'). Adding the partial "
                       "sums outside shard_map gets the number without the collective."),
    SpecMatches(id="structure.out_spec", title="out_specs gives back the replicated total: PartitionSpec()",
                target=RESULT_OUT,
                hint="After the psum every device holds the same total: out_specs=PartitionSpec() says so and "
                     "gives it back as one scalar; PartitionSpec('data') stacks a copy per device."),
    ResultSharding(id="structure.result_replicated",
                   title="The total is returned as shard_map gives it: on every device, PartitionSpec()", target=RESULT,
                   hint="After the psum every device holds the total: return shard_map's result as it is "
                        "(out_specs=PartitionSpec()), not one device's copy or a block of per-device values."),
    WithinLimits(),
]
