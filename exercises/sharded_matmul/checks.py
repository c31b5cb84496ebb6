"""Checks for sharded_matmul, built from the grader's check library.

Two arguments, each with its own target: x is split by rows, w is replicated, and the product
must be computed from both placed arrays; the result stays split by rows. Messages name x and
w, the student's own parameters."""
import numpy as np

from grader.authoring import (Array, LoadsFunction, NamedShardingTarget, ResultFromPlacement, ResultSharding, Returns,
                              Signature, ValueProperty, Wording, WithinLimits, arguments, exact_matmul, float32_array,
                              float32_matmul_tolerance, placement_checks, shapes)

SIGNATURE = Signature({"x": Array("float32", "n k"), "w": Array("float32", "k m")},
                      returns=Array("float32", "n m"))

# Structure is observed on these arguments: distinct values, shapes no value test uses.
PROBE = {"x": np.arange(64, dtype=np.float32).reshape(16, 4) * 0.25 - 7.0,
         "w": np.arange(12, dtype=np.float32).reshape(4, 3) * 0.5 + 1.0}

# n is a multiple of 8 (the mesh splits the rows); every edge of the domain is drawn first:
# no rows, k = 0 (a product of nothing: zeros), one column, no columns, one inner dimension.
INPUTS = arguments(shapes("n k m", (0, 3, 2), (8, 0, 2), (8, 1, 1), (8, 3, 0), (16, 5, 4), (24, 2, 3)),
                   x=float32_array("n k", bound=1e15), w=float32_array("k m", bound=1e15))

MESH = dict(axis_names=("data",))
X = NamedShardingTarget(**MESH, spec=("data", None), operand="x", match="exact",
                        also_accept={("data",): "PartitionSpec('data') splits the rows the same way."})
W = NamedShardingTarget(**MESH, spec=(), operand="w", match="exact",
                        also_accept={(None, None): "PartitionSpec(None, None) replicates w too; PartitionSpec() "
                                                   "says it for arrays of any rank."})
RESULT = NamedShardingTarget(**MESH, spec=("data", None))

CHECKS = [
    LoadsFunction(),
    Returns(id="type.product_shape", title="Returns a float32 JAX array of shape (n, m)",
            hint="x @ w has one row per row of x and one column per column of w."),
    ValueProperty(id="value.random_matrices", title="Multiplies random matrices correctly (Hypothesis)",
                  inputs=INPUTS, expected=exact_matmul, tolerance=float32_matmul_tolerance,
                  hint="Return the matrix product x @ w of the placed arrays: sharding changes no number."),
    *placement_checks(
        X, "x", mesh_note="every device, one axis named 'data'", from_placement=None,
        placed=Wording(hint="Place the argument x before multiplying, not the product afterwards."),
        spec=Wording(title="x is split by rows: PartitionSpec('data', None)",
                     hint="The first entry of the spec is x's rows: PartitionSpec('data', None).")),
    *placement_checks(
        W, "w", mesh=None, from_placement=None,
        placed=Wording(hint="Place w on the same mesh as x, replicated: every device needs all of w."),
        spec=Wording(hint="PartitionSpec() splits nothing: each device holds the whole of w.")),
    ResultFromPlacement(id="structure.product_of_placed_x", title="The product is computed from the placed x",
                        target=X, hint="Multiply the arrays jax.device_put returned, not the original x."),
    ResultFromPlacement(id="structure.product_of_placed_w", title="The product is computed from the placed w",
                        target=W, hint="Multiply the arrays jax.device_put returned, not the original w."),
    ResultSharding(id="structure.result_rows", title="The product stays split by rows over 'data'", target=RESULT,
                   hint="Rows of x split over 'data' times a replicated w give rows of the product split the "
                        "same way: return the product as JAX computed it."),
    WithinLimits(),
]
