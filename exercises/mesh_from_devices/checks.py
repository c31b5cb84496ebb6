"""Checks for mesh_from_devices, built from the grader's check library."""
import numpy as np

from grader.authoring import (LENGTHS, Array, LoadsFunction, NamedShardingTarget, ResultSharding, Returns, Signature,
                              ValueProperty, Wording, WithinLimits, arguments, dims, elementwise_tolerance,
                              float32_array, placement_checks)

SIGNATURE = Signature({"x": Array("float32", "n")}, returns=Array("float32", "n"))

# Structure is observed on this input: distinct values, a length no value test uses.
PROBE = {"x": np.array([2.0, -1.0, 4.0, 0.5, -3.25, 7.0, 1.5], dtype=np.float32)}

# x itself (not a value computed from it) goes onto a 2 x 2 mesh over jax.devices()[:4].
TARGET = NamedShardingTarget(axis_names=("data", "model"), spec=(), devices=(None, 4), mesh_shape=(2, 2),
                             match="exact")


def four_times(x: np.ndarray) -> np.ndarray:
    """The mesh holds 4 devices; multiplying by 4 is exact in float32 (no overflow below 1e30)."""
    return np.asarray(x, np.float64) * 4


CHECKS = [
    LoadsFunction(),
    Returns(id="type.like_x", title="Returns a float32 JAX array shaped like x",
                 hint="Return the JAX array itself, with x's shape: no float(), no NumPy conversion, no reshaping."),
    ValueProperty(id="value.random_vectors", title="Scales random vectors by the mesh size (Hypothesis)",
                  inputs=arguments(dims(n=LENGTHS), x=float32_array("n", bound=1e30)), expected=four_times,
                  tolerance=elementwise_tolerance(four_times),
                  hint="mesh.size counts the devices in the mesh (4), not jax.device_count() (8) and not the "
                       "number of axes (2)."),
    *placement_checks(
        TARGET, mesh_note="the first four devices, two along each axis, with exactly these names in this order",
        placed=Wording(hint="Place the argument x first, then scale the placed array: placing the result "
                            "afterwards, or placing nothing, skips the mesh this exercise is about."),
        from_placement=Wording(id="structure.scaled_the_placed",
                               hint="Scale the array jax.device_put returned, in JAX: not the original x, not on "
                                    "the host.")),
    ResultSharding(id="structure.result_on_mesh", title="The returned array lives on the 2 x 2 mesh, replicated",
                   target=TARGET,
                   hint="Compute on the placed array: the result then stays on the mesh."),
    WithinLimits(),
]
