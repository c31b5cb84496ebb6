"""Checks for data_parallel_train_step, built from the grader's check library.

One step of gradient descent on a linear model's mean squared error, data-parallel: every
leaf of params replicated over the 'data' mesh, every leaf of batch split by rows, the step
computed from the placed arrays, and the new params replicated. Values are judged against
the exact step (float64, math.fsum) within a tolerance derived from the float32 computation.
"""
import math

import numpy as np

from grader.authoring import (FLOAT32, Array, LoadsFunction, NamedShardingTarget, ResultFromPlacement, ResultSharding,
                              Returns, Signature, ValueProperty, Wording, WithinLimits, arguments, float32_array,
                              placement_checks, shapes, tree)

LEARNING_RATE = 0.1
PARAMS = {"dense": {"kernel": Array("float32", "k m"), "bias": Array("float32", "m")}}
SIGNATURE = Signature({"params": PARAMS, "batch": {"x": Array("float32", "n k"), "y": Array("float32", "n m")}},
                      returns=PARAMS)


def _distinct(shape: tuple[int, ...], start: float, step: float) -> np.ndarray:
    return (start + step * np.arange(int(np.prod(shape)))).astype(np.float32).reshape(shape)


# Structure is observed on these arguments: distinct values (within and across leaves), shapes
# no value test uses, and sizes every spec of the wrong variants divides (16 rows; k = 16 and
# m = 8, so even a parameter split over 'data' can be placed and be seen to be split, and a
# transposed kernel has the wrong shape).
PROBE = {"params": {"dense": {"kernel": _distinct((16, 8), -3.0, 0.046875), "bias": _distinct((8,), 5.0, 0.125)}},
         "batch": {"x": _distinct((16, 16), -40.0, 0.125), "y": _distinct((16, 8), 20.0, 0.03125)}}

# n is a multiple of 8 (the batch is split over 8 devices) and at least 8 (a mean over no
# examples is undefined); k and m are at least 1. Every edge is drawn first: one example per
# device, one input and one output, and larger ones. No k = 0: an unjitted jax.shard_map (a
# style the statement endorses) cannot lower x @ kernel when both are empty (JAX 0.10.2). Elements are bounded by 1e6: predictions stay below k·1e12 + 1e6,
# every gradient entry and every intermediate (x.T @ residuals: at most 24 · 1e6 · 4e12 ≈ 1e20,
# the loss itself at most 72 · (4e12)² ≈ 1e27) far below float32's 3.4e38.
INPUTS = arguments(shapes("n k m", (8, 1, 1), (8, 1, 2), (16, 3, 1), (24, 4, 3)),
                   params=tree(dense=tree(kernel=float32_array("k m", bound=1e6), bias=float32_array("m", bound=1e6))),
                   batch=tree(x=float32_array("n k", bound=1e6), y=float32_array("n m", bound=1e6)))


def _parts(params: dict, batch: dict) -> tuple[np.ndarray, ...]:
    dense = params["dense"]
    return tuple(np.asarray(v, np.float64) for v in (batch["x"], batch["y"], dense["kernel"], dense["bias"]))


def sgd_step(params: dict, batch: dict) -> dict:
    """The exact step. loss = mean over the n·m entries of (x @ W + b - y)², so with residuals
    r = x @ W + b - y and c = 2 / (n·m): grad W = c · xᵀ r, grad b = c · Σ_rows r. Every residual
    and every sum is a math.fsum of float64 products of float32 values (exact products), so the
    answer is correct to float64 rounding, a billion times finer than the tolerance."""
    x, y, w, b = _parts(params, batch)
    (n, k), m = x.shape, y.shape[1]
    residual = np.array([[math.fsum([*(x[p] * w[:, j]).tolist(), b[j], -y[p, j]]) for j in range(m)]
                         for p in range(n)]).reshape(n, m)
    scale = 2.0 / (n * m)
    grad_w = np.array([[scale * math.fsum((x[:, i] * residual[:, j]).tolist()) for j in range(m)]
                       for i in range(k)]).reshape(k, m)
    grad_b = np.array([scale * math.fsum(residual[:, j].tolist()) for j in range(m)])
    return {"dense": {"kernel": w - LEARNING_RATE * grad_w, "bias": b - LEARNING_RATE * grad_b}}


def float32_sgd_step_tolerance(params: dict, batch: dict) -> dict:
    """How far a correct float32 step may stray from the exact one, entry by entry, derived by
    counting roundings (each at most eps times the magnitude of what it rounds):

    - a residual r = x·W[:, j] + b - y is k products and additions, then + b and - y: at most
      (k + 2)·eps·R, where R = |x| @ |W| + |b| + |y| bounds every partial sum;
    - the gradient c·xᵀr (c = 2/(n·m)) is n products and additions, in any order or split
      over devices, and the scaling by c (c itself rounded, then a multiply) two more, each
      at most eps·c·G with G = |x|ᵀ R (for the bias: the column sums of R); the residuals'
      own errors reach it multiplied by c·|x| (for the bias: by c), (k + 2)·eps·c·G again;
    - the update p - lr·g rounds lr (0.1 is not a float32), the product and the difference:
      eps·lr·c·G twice and eps·|p - lr·g| ≤ eps·(|p| + lr·c·G).

    That is lr·c·(n + k + 7)·eps·G + eps·|p|; the count is taken as n + k + 9, so a solution
    that scales in another order (a local mean per device, then a mean across devices) has
    two roundings to spare. XLA's CPU backend flushes subnormal intermediates to zero: at most
    tiny each, (k + 2) per residual (reaching the gradient times c·Σ|x|, or c·n for the bias),
    2n + 4 in the gradient (c ≤ 1/4, lr < 1, so none grows afterwards) and 2 in the update.
    Second-order terms (products of two roundings) are below eps² · (n + k)² relative: nothing."""
    x, y, w, b = _parts(params, batch)
    n, m = y.shape
    x, y, w, b = np.abs(x), np.abs(y), np.abs(w), np.abs(b)
    eps, tiny = float(FLOAT32.eps), float(FLOAT32.tiny)
    k = x.shape[1]
    scale = 2.0 / (n * m)
    magnitude = x @ w + b + y  # R, n x m
    roundings = n + k + 9
    flushed_w = scale * (k + 2) * tiny * np.sum(x, axis=0)[:, None] + (2 * n + 4) * tiny  # k x 1
    flushed_b = scale * (k + 2) * tiny * n + (2 * n + 4) * tiny
    kernel = LEARNING_RATE * (scale * roundings * eps * (x.T @ magnitude) + flushed_w) + eps * w + 2 * tiny
    bias = LEARNING_RATE * (scale * roundings * eps * magnitude.sum(axis=0) + flushed_b) + eps * b + 2 * tiny
    return {"dense": {"kernel": kernel.reshape(w.shape), "bias": bias}}


MESH = dict(axis_names=("data",))
REPLICATED = {(None,): "PartitionSpec(None) replicates a vector too; PartitionSpec() says it for any rank.",
              (None, None): "PartitionSpec(None, None) replicates a matrix too; PartitionSpec() says it for any rank."}
PARAMS_TARGET = NamedShardingTarget(**MESH, spec=(), operand="params", match="exact", also_accept=REPLICATED)
BATCH_TARGET = NamedShardingTarget(**MESH, spec=("data",), operand="batch", match="exact",
                                   also_accept={("data", None): "PartitionSpec('data', None) splits the rows the "
                                                                "same way."})
NEW_KERNEL = NamedShardingTarget(**MESH, spec=(), operand="result", also_accept=REPLICATED)

CHECKS = [
    LoadsFunction(),
    Returns(id="type.params_tree", title="Returns new params shaped like params: {'dense': {'kernel', 'bias'}}",
            advice="Return the new params only, with the structure and shapes of params (no loss, no grads).",
            hint="Return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads): the same dict as params."),
    ValueProperty(id="value.random_steps", title="Takes the gradient step correctly on random data (Hypothesis)",
                  inputs=INPUTS, expected=sgd_step, tolerance=float32_sgd_step_tolerance,
                  hint="loss = jnp.mean((x @ kernel + bias - y) ** 2) over all n·m entries, one step "
                       "p - 0.1 * grad on every leaf. Sharding changes no number: the mean is over the whole "
                       "batch, not summed over devices."),
    *placement_checks(
        PARAMS_TARGET, "params", mesh=None, from_placement=None,
        placed=Wording(title="Places every leaf of params with jax.device_put on a NamedSharding",
                       hint="jax.device_put(params, NamedSharding(mesh, PartitionSpec())) places every leaf of the "
                            "dict at once."),
        spec=Wording(id="structure.params_replicated", title="Every leaf of params is replicated: PartitionSpec()",
                     hint="In data parallelism every device holds the whole model: PartitionSpec() for every "
                          "leaf.")),
    *placement_checks(
        BATCH_TARGET, "batch", mesh_note="every device, one axis", from_placement=None,
        placed=Wording(title="Places every leaf of batch with jax.device_put on a NamedSharding",
                       hint="jax.device_put(batch, NamedSharding(mesh, PartitionSpec('data'))) places x and y at "
                            "once."),
        mesh=Wording(title="The batch's mesh is all of jax.devices() with axis 'data'"),
        spec=Wording(id="structure.batch_split", title="Every leaf of batch is split by rows: PartitionSpec('data')",
                     hint="Each device gets its own examples: PartitionSpec('data') splits the rows of x and y.")),
    ResultFromPlacement(id="structure.step_from_placed_params", title="The step is computed from the placed params",
                        target=PARAMS_TARGET,
                        hint="Differentiate and update the params jax.device_put returned, not the originals."),
    ResultFromPlacement(id="structure.step_from_placed_batch", title="The step is computed from the placed batch",
                        target=BATCH_TARGET,
                        hint="Compute the loss on the batch jax.device_put returned, not on the original."),
    ResultSharding(id="structure.new_params_replicated",
                   title="The new kernel is replicated over the mesh, like params", target=NEW_KERNEL,
                   result="result['dense']['kernel']",
                   hint="Replicated params minus a gradient averaged over the whole batch stay replicated: "
                        "return the update as JAX computed it."),
    WithinLimits(),
]
