"""Checks for move_between_shardings, built from the grader's check library."""
import numpy as np

from grader.authoring import (Array, LoadsFunction, NamedShardingTarget, ResultFromPlacement, Returns, ShardLayout,
                              Signature, ValueProperty, Wording, WithinLimits, arguments, dims, exactly,
                              float32_array, no_tolerance, placement_checks)

SIGNATURE = Signature({"x": Array("float32", "n")}, returns=Array("float32", "n"))

# Structure is observed on this input: 12 distinct values, three per device.
PROBE = {"x": np.array([2.0, -1.0, 4.0, 0.5, -3.25, 7.0, 1.5, 6.0, -2.5, 3.0, 9.0, -4.0], dtype=np.float32)}

# First x itself goes onto jax.devices()[:4]; then a value computed from it (the placed copy)
# goes onto jax.devices()[4:], in device order.
FIRST = NamedShardingTarget(axis_names=("data",), spec=("data",), devices=(None, 4), match="exact")
SECOND = NamedShardingTarget(axis_names=("data",), spec=("data",), devices=(4, None), match="derived",
                             label="the placed array")

CHECKS = [
    LoadsFunction(),
    Returns(id="type.like_x", title="Returns a float32 JAX array shaped like x",
                 hint="Return the moved JAX array itself, in float32."),
    ValueProperty(id="value.random_vectors", title="Moving changes no value (Hypothesis)",
                  inputs=arguments(dims(n=(0, 4, 8, 16, 32)), x=float32_array("n", bound=1e30)), expected=exactly,
                  tolerance=no_tolerance,
                  hint="jax.device_put copies values bit for bit: no casting, reordering or arithmetic."),
    *placement_checks(
        FIRST, "first", placed=None, from_placement=None,
        mesh=Wording(title="x is first placed on jax.devices()[:4] with axis 'data'",
                     hint="first = Mesh(np.array(jax.devices()[:4]), ('data',)); place x itself there."),
        spec=Wording(title="The first placement splits x: PartitionSpec('data')", hint=None)),
    *placement_checks(
        SECOND, "second", placed=None, from_placement=None,
        mesh=Wording(title="Then it moves to jax.devices()[4:] with axis 'data'",
                     hint="second = Mesh(np.array(jax.devices()[4:]), ('data',)); jax.device_put the placed "
                          "array there."),
        spec=Wording(title="The second placement splits it too: PartitionSpec('data')",
                     hint="PartitionSpec() would copy the whole array to each of the four devices.")),
    ResultFromPlacement(id="structure.moved_the_placed", title="The result comes from moving the first placement",
                        target=FIRST,
                        hint="Move the array the first jax.device_put returned, not the original x."),
    ShardLayout(id="structure.shards", title="Device 4 holds the first quarter, device 5 the second, ...",
                target=SECOND,
                hint="The mesh's device order decides who holds which block: use jax.devices()[4:] as it is."),
    WithinLimits(),
]
