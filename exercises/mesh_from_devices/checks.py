"""Checks for mesh_from_devices, built from the grader's check library."""
import numpy as np

from grader.arguments import Array, Signature
from grader.checks import (ResultFromPlacement, LoadsFunction, MeshMatches, NamedShardingTarget, PlacedOnNamedSharding, ResultSharding,
                           Returns, SpecMatches, ValueProperty, WithinLimits)
from grader.strategies import LENGTHS, arguments, dims, elementwise_tolerance, float32_array

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
    LoadsFunction(id="load.function", title="The file loads and defines replicate_on_mesh(x)"),
    Returns(id="type.like_x", title="Returns a float32 JAX array shaped like x",
                 hint="Return the JAX array itself, with x's shape: no float(), no NumPy conversion, no reshaping."),
    ValueProperty(id="value.random_vectors", title="Scales random vectors by the mesh size (Hypothesis)",
                  inputs=arguments(dims(n=LENGTHS), x=float32_array("n", bound=1e30)), expected=four_times,
                  tolerance=elementwise_tolerance(four_times),
                  hint="mesh.size counts the devices in the mesh (4), not jax.device_count() (8) and not the "
                       "number of axes (2)."),
    PlacedOnNamedSharding(id="structure.placed", title="Places x itself with jax.device_put on a NamedSharding",
                          target=TARGET,
                          hint="Place the argument x first, then scale the placed array: placing the result "
                               "afterwards, or placing nothing, skips the mesh this exercise is about."),
    MeshMatches(id="structure.mesh", title="The mesh is jax.devices()[:4] as a 2 x 2 grid with axes ('data', 'model')",
                target=TARGET,
                hint="Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ('data', 'model')): the first four "
                     "devices, two along each axis, with exactly these names in this order."),
    SpecMatches(id="structure.spec", title="The spec is PartitionSpec() (replicated)", target=TARGET,
                hint="PartitionSpec() splits nothing: every device of the mesh holds all of x."),
    ResultFromPlacement(id="structure.scaled_the_placed", title="The result is computed from the placed x",
                        target=TARGET,
                        hint="Scale the array jax.device_put returned, in JAX: not the original x, not on the host."),
    ResultSharding(id="structure.result_on_mesh", title="The returned array lives on the 2 x 2 mesh, replicated",
                   target=TARGET,
                   hint="Compute on the placed array: the result then stays on the mesh."),
    WithinLimits(id="limits.resources", title="Runs within the time and memory limits"),
]
