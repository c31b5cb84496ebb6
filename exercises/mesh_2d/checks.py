"""Checks for mesh_2d, built from the grader's check library."""
import numpy as np

from grader.authoring import (Array, LoadsFunction, NamedShardingTarget, Returns, ShardLayout, Signature, ValueProperty,
                              Wording, WithinLimits, arguments, elementwise_tolerance, float32_array, placement_checks,
                              shapes)

SIGNATURE = Signature({"x": Array("float32", "r c")}, returns=Array("float32", "r c"))

# Structure is observed on this input: 8 x 12 (every spec the wrong variants use divides it),
# a shape no value test uses.
PROBE = {"x": (np.arange(96, dtype=np.float32).reshape(8, 12) - 40.0) * 0.25}

# Rows divide by 8 and columns by 8, so swapped or flattened specs run too (and fail structure only).
# No empty matrix: in jax 0.10.2 reading back an empty 2-D-sharded result of jnp.square on a
# jax.make_mesh (Explicit) mesh raises inside JAX, which would fail correct solutions.
# The smallest matrix the statement allows (2 x 4), and sizes every spec of the wrong variants divides.
SHAPES = shapes("r c", (2, 4), (8, 8), (16, 8), (8, 16), (24, 8))

TARGET = NamedShardingTarget(axis_names=("data", "model"), spec=("data", "model"), mesh_shape=(2, 4),
                             match="exact")


def square(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float64) ** 2


CHECKS = [
    LoadsFunction(),
    Returns(id="type.like_x", title="Returns a float32 JAX array shaped like x"),
    ValueProperty(id="value.random_matrices", title="Squares random matrices element by element (Hypothesis)",
                  inputs=arguments(SHAPES, x=float32_array("r c", bound=1e15)), expected=square,
                  tolerance=elementwise_tolerance(square),
                  hint="Multiply the placed matrix by itself element by element (placed * placed)."),
    *placement_checks(
        TARGET, mesh_note="2 along 'data', 4 along 'model', the names in this order",
        placed=Wording(hint="Place x first, then square the placed matrix."),
        spec=Wording(title="The spec is PartitionSpec('data', 'model'): rows and columns split",
                     hint="The spec's first entry splits the rows, the second the columns: PartitionSpec('data', "
                          "'model'). Leaving one out replicates along that mesh axis."),
        from_placement=Wording(id="structure.square_of_placed", title="The squares are computed from the placed matrix",
                               hint=None)),
    ShardLayout(id="structure.blocks", title="Each device holds its own block of the result", target=TARGET,
                hint="With the 2 x 4 mesh in device order and PartitionSpec('data', 'model'), device i holds "
                     "row block i // 4 and column block i % 4."),
    WithinLimits(),
]
