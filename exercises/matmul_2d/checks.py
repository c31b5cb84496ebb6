"""Checks for matmul_2d, built from the grader's check library.

Megatron's column-parallel layer on a 2 x 4 ('data', 'model') mesh: x's rows split over
'data' (replicated along 'model'), w's columns split over 'model' (replicated along 'data'),
so each device multiplies its own rows by its own columns without communicating, and the
product comes out split both ways, PartitionSpec('data', 'model'). Each operand has its own
target, so a report says which one is misplaced."""
import numpy as np

from grader.authoring import (Array, LoadsFunction, NamedShardingTarget, ResultFromPlacement, ResultSharding, Returns,
                              ShardLayout, Signature, ValueProperty, Wording, WithinLimits, arguments, exact_matmul,
                              float32_array, float32_matmul_tolerance, placement_checks, shapes)

SIGNATURE = Signature({"x": Array("float32", "n k"), "w": Array("float32", "k m")},
                      returns=Array("float32", "n m"))

# Structure is observed on these arguments: distinct values, shapes no value test uses, and
# sizes every spec of the wrong variants divides (x (16, 4): rows by 2, 4 or 8, columns by 4;
# w (4, 8): rows by 4, columns by 2, 4 or 8), n != m so a transposed product has the wrong shape.
PROBE = {"x": np.arange(64, dtype=np.float32).reshape(16, 4) * 0.25 - 7.5,
         "w": np.arange(32, dtype=np.float32).reshape(4, 8) * 0.5 + 1.0}

# n is a multiple of 2 ('data' has 2 devices), m a multiple of 4 ('model' has 4), k anything.
# Every edge of the domain is drawn first: no rows, k = 0 (a product of nothing: zeros), one
# inner dimension, no columns, the smallest split (2 x 4), and larger ones.
INPUTS = arguments(shapes("n k m", (0, 3, 4), (2, 0, 4), (2, 1, 4), (4, 3, 0), (6, 5, 8), (16, 2, 12)),
                   x=float32_array("n k", bound=1e15), w=float32_array("k m", bound=1e15))

MESH = dict(axis_names=("data", "model"), mesh_shape=(2, 4))
X = NamedShardingTarget(**MESH, spec=("data", None), operand="x", match="exact",
                        also_accept={("data",): "PartitionSpec('data') splits the rows the same way."})
W = NamedShardingTarget(**MESH, spec=(None, "model"), operand="w", match="exact")
RESULT = NamedShardingTarget(**MESH, spec=("data", "model"), operand="result")

CHECKS = [
    LoadsFunction(),
    Returns(id="type.product_shape", title="Returns a float32 JAX array of shape (n, m)",
            hint="x @ w has one row per row of x and one column per column of w."),
    ValueProperty(id="value.random_matrices", title="Multiplies random matrices correctly (Hypothesis)",
                  inputs=INPUTS, expected=exact_matmul, tolerance=float32_matmul_tolerance,
                  hint="Return the matrix product x @ w of the placed arrays: sharding changes no number."),
    *placement_checks(
        X, "x", mesh_note="2 devices along 'data', 4 along 'model', the names in this order", from_placement=None,
        placed=Wording(hint="Place the argument x before multiplying, not the product afterwards."),
        spec=Wording(title="x's rows are split over 'data': PartitionSpec('data', None)",
                     hint="The first entry of the spec is x's rows: PartitionSpec('data', None) splits them over "
                          "'data' and keeps a copy on every device along 'model'.")),
    *placement_checks(
        W, "w", from_placement=None,
        placed=Wording(hint="Place w on the same mesh as x before multiplying."),
        mesh=Wording(title="w's mesh is the same 2 x 4 ('data', 'model') grid",
                     hint="Place x and w on one mesh: Mesh(np.array(jax.devices()).reshape(2, 4), ('data', "
                          "'model'))."),
        spec=Wording(title="w's columns are split over 'model': PartitionSpec(None, 'model')",
                     hint="The second entry of the spec is w's columns: PartitionSpec(None, 'model'). Splitting "
                          "w's rows instead (PartitionSpec('model', None)) is the row-parallel layout, which needs "
                          "a sum across devices.")),
    ResultFromPlacement(id="structure.product_of_placed_x", title="The product is computed from the placed x",
                        target=X, hint="Multiply the arrays jax.device_put returned, not the original x."),
    ResultFromPlacement(id="structure.product_of_placed_w", title="The product is computed from the placed w",
                        target=W, hint="Multiply the arrays jax.device_put returned, not the original w."),
    ResultSharding(id="structure.result_sharding",
                   title="The product is split both ways: PartitionSpec('data', 'model')", target=RESULT,
                   hint="Rows split over 'data' times columns split over 'model' give a product split over both: "
                        "return the product as JAX computed it."),
    ShardLayout(id="structure.result_blocks", title="Each device holds its own block of the product", target=RESULT,
                hint="With the 2 x 4 mesh in device order, device i holds row block i // 4 and column block i % 4 "
                     "of the product: build the mesh from jax.devices() in order."),
    WithinLimits(),
]
