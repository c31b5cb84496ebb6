"""Checks for tensor_parallel_mlp, built from the grader's check library.

A two-layer MLP, ``relu(x @ w1) @ w2``, split Megatron-style over a mesh of all 8 devices with
the axis 'model': w1 by columns and w2 by rows, so each device computes the hidden units of its
own block and a partial output, and one psum over 'model' adds the partial outputs. Judged: the
values (against the float64 answer, with a tolerance derived from the two float32 products);
the shard_map's mesh and each operand's spec; the output computed from the blocks of w1 and w2;
exactly one psum, over 'model', inside shard_map; what XLA runs (an all-reduce, no all-gather,
at most one output's bytes moved per device); and the output replicated on the mesh.
"""
import math

import numpy as np

from grader.authoring import (FLOAT32, Array, CollectiveCount, CommunicatesAtMost, LoadsFunction, NamedShardingTarget,
                              ResultFromPlacement, ResultSharding, Returns, Signature, SpecMatches, UsesCollective,
                              UsesPrimitive, ValueProperty, Wording, WithinLimits, arguments, float32_array,
                              placement_checks, shapes)

DEVICES = 8
SIGNATURE = Signature({"x": Array("float32", "n d"), "w1": Array("float32", "d h"), "w2": Array("float32", "h d")},
                      returns=Array("float32", "n d"))

# Distinct values in every array; n = 6 and d = 4 differ (a transposed result shows), h = 16 is
# two hidden units per device. The output (96 bytes) is smaller than w1 or w2 (256 bytes each),
# so gathering a weight moves more than the one psum of the output.
PROBE = {"x": np.arange(24, dtype=np.float32).reshape(6, 4) * 0.25 - 2.875,
         "w1": np.arange(64, dtype=np.float32).reshape(4, 16) * 0.125 - 3.9375,
         "w2": np.arange(64, dtype=np.float32).reshape(16, 4) * -0.0625 + 1.96875}


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b in float64 with every entry correctly rounded (math.fsum of exact products)."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = math.fsum((a[i] * b[:, j]).tolist())
    return out


def mlp(x: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """relu(x @ w1) @ w2, computed exactly (the hidden layer exact, then the second product
    correctly rounded to float64)."""
    x64, w1_64, w2_64 = (np.asarray(a, np.float64) for a in (x, w1, w2))
    return _dot(np.maximum(_dot(x64, w1_64), 0.0), w2_64)


def mlp_tolerance(x: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """A float32 computation of relu(x @ w1) @ w2, the second product summed in any order (the
    psum adds the 8 devices' partial sums): the hidden layer is off by at most
    e1 = (d + 1)(eps |x| @ |w1| + tiny) (relu does not grow an error), which the second product
    carries as e1 @ |w2|, and the second product adds (h + 1)(eps (|hidden| + e1) @ |w2| + tiny)."""
    eps, tiny = float(FLOAT32.eps), float(FLOAT32.tiny)
    x64, w1_64, w2_64 = (np.asarray(a, np.float64) for a in (x, w1, w2))
    d, h = w1.shape
    hidden = np.maximum(x64 @ w1_64, 0.0)
    e1 = (d + 1) * (eps * (np.abs(x64) @ np.abs(w1_64)) + tiny)
    return e1 @ np.abs(w2_64) + (h + 1) * (eps * ((np.abs(hidden) + e1) @ np.abs(w2_64)) + tiny)


# h is a multiple of 8 (each device its hidden units); d = 1 (one feature), one row, an ordinary
# shape, h = 24 (three hidden units per device) and a larger one. n = 0 is left out: an eager
# shard_map over an empty x can crash inside JAX's lowering (see docs/authoring.md).
INPUTS = arguments(shapes("n d h", (1, 1, 8), (3, 2, 8), (2, 5, 24), (5, 3, 16), (12, 8, 32)),
                   x=float32_array("n d", bound=1e8), w1=float32_array("d h", bound=1e8),
                   w2=float32_array("h d", bound=1e8))

MESH = dict(axis_names=("model",), devices=(None, None))
REPLICATED = {(None,): "PartitionSpec(None) replicates too.",
              (None, None): "PartitionSpec(None, None) replicates too."}
X_IN = NamedShardingTarget(**MESH, spec=(), via="shard_map_in", operand="x", also_accept=REPLICATED)
W1_IN = NamedShardingTarget(**MESH, spec=(None, "model"), via="shard_map_in", operand="w1")
W2_IN = NamedShardingTarget(**MESH, spec=("model",), via="shard_map_in", operand="w2",
                            also_accept={("model", None): "PartitionSpec('model', None) splits the rows the same way."})
RESULT_OUT = NamedShardingTarget(**MESH, spec=(), via="shard_map_out", operand="result", also_accept=REPLICATED)
RESULT = NamedShardingTarget(**MESH, spec=(), operand="result", also_accept=REPLICATED)

SHARD_MAP = ("jax.shard_map(f, mesh=Mesh(np.array(jax.devices()), ('model',)), in_specs=(PartitionSpec(), "
             "PartitionSpec(None, 'model'), PartitionSpec('model', None)), out_specs=PartitionSpec())")

CHECKS = [
    LoadsFunction(),  # "The file loads and defines tensor_parallel_mlp(x, w1, w2)"
    Returns(id="type.like_x", title="Returns a float32 JAX array of shape (n, d)",
            hint="out_specs=PartitionSpec() gives back one (n, d) output; PartitionSpec('model') stacks the eight "
                 "partial outputs into (8n, d)."),
    ValueProperty(id="value.mlp", title="Equals relu(x @ w1) @ w2 (Hypothesis)", inputs=INPUTS, expected=mlp,
                  tolerance=mlp_tolerance,
                  hint="relu acts on each device's own hidden units, before the second product; the psum adds the "
                       "partial outputs (pmean would average them)."),
    # structure.shard_map, structure.mesh, structure.w1_spec, structure.from_w1_blocks
    *placement_checks(
        W1_IN, "w1", mesh_note="all 8 devices, one axis named 'model'",
        placed=Wording(id="structure.shard_map", title="w1 enters a jax.shard_map", hint=SHARD_MAP + ", called on "
                       "(x, w1, w2)."),
        mesh=Wording(id="structure.mesh", title="The mesh is all of jax.devices() with axis 'model'"),
        spec=Wording(id="structure.w1_spec", title="w1 is split by columns: PartitionSpec(None, 'model')",
                     hint="in_specs PartitionSpec(None, 'model') for w1 gives each device h/8 of its columns (hidden "
                          "units); PartitionSpec() copies all of w1 to every device."),
        from_placement=Wording(id="structure.from_w1_blocks",
                               title="The output is computed from the blocks of w1 shard_map hands out",
                               hint="Multiply by the block of w1 your per-device function receives: not w1 captured "
                                    "from outside, not a copy made on the host.")),
    SpecMatches(id="structure.w2_spec", title="w2 is split by rows: PartitionSpec('model', None)", target=W2_IN,
                hint="in_specs PartitionSpec('model', None) for w2: the rows that match the device's hidden units."),
    SpecMatches(id="structure.x_spec", title="x is replicated: PartitionSpec()", target=X_IN,
                hint="in_specs PartitionSpec() for x: every device needs all of x for its hidden units."),
    ResultFromPlacement(id="structure.from_w2_blocks",
                        title="The output is computed from the blocks of w2 shard_map hands out", target=W2_IN,
                        hint="Multiply the hidden block by the block of w2 your per-device function receives."),
    UsesPrimitive(id="structure.psum", title="A psum over 'model' inside shard_map adds the partial outputs",
                  operation="psum", axes=("model",), inside="shard_map",
                  hint="Inside the per-device function: jax.lax.psum(relu(x @ w1_block) @ w2_block, 'model')."),
    CollectiveCount(id="structure.one_psum", title="Exactly one psum", operation="psum", exactly=1,
                    hint="One psum of the partial output is all the layer needs: a second one moves the output "
                         "again."),
    UsesCollective(id="structure.compiled_all_reduce", title="XLA runs an all-reduce, and no all-gather",
                   kind="all-reduce", instead_of=("all-gather",),
                   hint="The weights stay split: gathering w1 or w2 moves whole weights where the psum moves one "
                        "output."),
    CommunicatesAtMost(id="structure.one_output_moved", title="At most one output's bytes moved per device",
                       of="result", fraction=1.0,
                       hint="One psum of the (n, d) partial output: a second collective, or a gather of a weight, "
                            "moves more."),
    SpecMatches(id="structure.out_spec", title="out_specs gives back the replicated output: PartitionSpec()",
                target=RESULT_OUT,
                hint="After the psum every device holds the same output: out_specs=PartitionSpec()."),
    ResultSharding(id="structure.output_replicated",
                   title="The output is returned as shard_map gives it: on every device, PartitionSpec()",
                   target=RESULT,
                   hint="Return shard_map's result as it is: not split by columns, not moved to one device."),
    WithinLimits(),
]
