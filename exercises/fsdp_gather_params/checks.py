"""Checks for fsdp_gather_params, built from the grader's check library.

Fully sharded data parallelism stores every weight split over the devices and gathers it whole
only inside the program that uses it. The task: store w split by rows over a 'data' mesh of all
8 devices, and in one jitted function of (w_stored, x) gather w (a sharding constraint to
PartitionSpec(), or a shard_map with a tiled all_gather) and compute relu(x @ w); return
(w_stored, relu(x @ w)).

Judged: the values; the stored placement (jax.device_put of w itself, its mesh and spec); at
most 1/8 of w held per device between programs (every placement of w and every array of its size
the call holds, however made, and what the student's largest jitted program takes in); the output computed from the stored w; the gather in the
same jitted program as the matmul, feeding it (not in its own jit, not eager); that it is w
that is gathered; what XLA runs (one all-gather, no all-reduce, at most one copy of w moved per
device); and w_stored returned as stored.
"""
import numpy as np

from grader.authoring import (Array, AnyOf, CollectiveCount, CommunicatesAtMost, DeviceMemoryAtMost, LoadsFunction, NamedShardingTarget,
                              PlacedAtMostPerDevice, ResultFromPlacement, ResultSharding, Returns, SameJit, Signature,
                              SpecMatches, UsesCollective, UsesPrimitive, ValueProperty, Wording, WithinLimits,
                              arguments, exact_matmul, float32_array, float32_matmul_tolerance, no_tolerance,
                              placement_checks, shapes)

DEVICES = 8
SIGNATURE = Signature({"w": Array("float32", "d m"), "x": Array("float32", "n d")},
                      returns=(Array("float32", "d m"), Array("float32", "n m")))

# Distinct values; d = 16 is two rows of w per device. w (16 x 24, 1536 bytes) is much larger than
# x (2 x 16, 128 bytes), as weights are: a program handed all of w stands out from one handed its
# eighth and x.
# w's values are a permutation of an arithmetic sequence, so x @ w has entries of both signs (relu
# keeps some and zeroes others: the output depends on w through the kept ones).
PROBE = {"w": ((np.arange(16 * 24) * 149 % (16 * 24)) * 0.03125 - 5.984375).astype(np.float32).reshape(16, 24),
         "x": np.arange(32, dtype=np.float32).reshape(2, 16) * -0.25 + 3.875}
# What the forward may take in per device: an eighth of w, and x whole.
FORWARD_ARGUMENTS = PROBE["w"].nbytes // DEVICES + PROBE["x"].nbytes


def forward(w: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(w as it was given, relu(x @ w) computed exactly)."""
    return np.asarray(w, np.float32), np.maximum(exact_matmul(x=x, w=w), 0.0)


def forward_tolerance(w: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
    """w is only moved (bit for bit); relu(x @ w) within a float32 product's rounding (relu does
    not grow an error)."""
    return no_tolerance(), float32_matmul_tolerance(x=x, w=w)


# d a multiple of 8 (each device its rows of w); one row of x, one column of w, no rows of x,
# and ordinary shapes.
INPUTS = arguments(shapes("d m n", (8, 1, 3), (8, 3, 1), (16, 5, 0), (24, 2, 4), (32, 6, 5)),
                   w=float32_array("d m", bound=1e15), x=float32_array("n d", bound=1e15))

MESH = dict(axis_names=("data",), devices=(None, None))
ROWS = {("data",): "PartitionSpec('data') splits the rows the same way."}
# w placed split by rows: the stored weights.
W_STORED = NamedShardingTarget(**MESH, spec=("data", None), via="device_put", operand="w", match="exact",
                               also_accept=ROWS)
# ... and returned as stored.
RESULT_W = NamedShardingTarget(**MESH, spec=("data", None), operand="result[0]", also_accept=ROWS)
# The routes of the gather: a constraint of a copy of w to PartitionSpec() inside jit, or a shard_map's
# tiled all_gather. (A jax.device_put to PartitionSpec() inside jit is no route: XLA compiled it as
# partial products and an all-reduce of the output, and PlacedAtMostPerDevice counts it as a
# placement of all of w.)
W_CONSTRAINED = NamedShardingTarget(**MESH, spec=(), via="constraint", operand="w", match="derived",
                                    shaped_like="w", inside="jit", also_accept={(None, None): "replicated too"})

CHECKS = [
    LoadsFunction(),  # "The file loads and defines fsdp_forward(w, x)"
    Returns(id="type.stored_and_output", title="Returns a tuple: w_stored (d, m) and the output (n, m), float32",
            hint="return w_stored, relu(x @ w): the stored weights first, then the forward's output."),
    ValueProperty(id="value.forward", title="Returns w unchanged and relu(x @ w) (Hypothesis)", inputs=INPUTS,
                  expected=forward, tolerance=forward_tolerance,
                  hint="The gather changes where w is, not its values: relu(x @ w) with the whole w."),
    # structure.w_stored, structure.mesh, structure.stored_spec
    *placement_checks(
        W_STORED, mesh_note="all 8 devices, one axis named 'data'",
        placed=Wording(id="structure.w_stored", title="w is stored with jax.device_put on a NamedSharding",
                       hint="w_stored = jax.device_put(w, NamedSharding(mesh, PartitionSpec('data', None)))."),
        spec=Wording(id="structure.stored_spec", title="w is stored split by rows: PartitionSpec('data', None)",
                     hint="PartitionSpec('data', None): each device stores d/8 rows of w; PartitionSpec() stores all "
                          "of it on every device, which is what FSDP avoids."),
        from_placement=None),
    ResultFromPlacement(id="structure.from_stored", title="The output is computed from the stored w",
                        target=W_STORED, result="result[1]",
                        hint="Give w_stored (not w) to your jitted forward, and multiply by what it gathers."),
    PlacedAtMostPerDevice(id="structure.stored_eighth",
                          title="Every copy of w on the devices holds at most 1/8 of it per device",
                          operand="w", fraction=1 / DEVICES,
                          hint="Between programs each device keeps only its d/8 rows: no replicated copy of w outside "
                               "the forward, however made (jax.device_put, jnp.array(..., device=), "
                               "jax.make_array_from_callback, a jitted function's output)."),
    DeviceMemoryAtMost(id="structure.forward_takes_shards",
                       title="Your jitted programs take in at most 1/8 of w (and x) per device",
                       kind="argument", at_most_bytes=FORWARD_ARGUMENTS, own_only=True,
                       hint="Hand the forward w_stored as stored: a gather in a jitted function of its own (or done "
                            "eagerly) hands the forward all of w on every device."),
    SameJit(id="structure.gather_in_forward",
            title="The gather runs inside the jitted forward and feeds the matmul",
            operations=(("sharding_constraint", "reshard", "all_gather"), "dot_general"), linked=True,
            hint="One @jax.jit function of (w_stored, x): gather w inside it (with_sharding_constraint to "
                 "PartitionSpec(), jax.sharding.reshard to P() on an Explicit mesh, or a shard_map with "
                 "all_gather(..., tiled=True)), then relu(x @ w)."),
    AnyOf(SpecMatches(id="structure.gathers_w.constraint", title="a sharding constraint of w to PartitionSpec()",
                      target=W_CONSTRAINED),
          UsesPrimitive(id="structure.gathers_w.all_gather", title="a tiled all_gather of w's rows inside shard_map",
                        operation="all_gather", axes=("data",), inside="shard_map", reads="w",
                        params={"tiled": True}),
          id="structure.gathers_w", title="It is w that is gathered: to PartitionSpec(), or by a tiled all_gather",
          description="gather w (not x, not the output) inside the forward",
          hint="Gather w_stored: jax.lax.with_sharding_constraint(w_stored, NamedSharding(mesh, PartitionSpec())) "
               "or jax.lax.all_gather(w_block, 'data', tiled=True) inside shard_map."),
    UsesCollective(id="structure.compiled_all_gather", title="XLA runs an all-gather, and no all-reduce",
                   kind="all-gather", instead_of=("all-reduce",),
                   hint="Gather the weights and multiply locally: summing partial products (a psum, or x split to "
                        "match w's rows) is an all-reduce of the output, not FSDP's gather."),
    CollectiveCount(id="structure.one_gather", title="XLA runs one all-gather: w is gathered once",
                    operation="all-gather", exactly=1,
                    hint="One gather of the whole w: gathering it in pieces (one all_gather per block of columns) "
                         "runs a collective per piece."),
    CommunicatesAtMost(id="structure.one_copy_moved", title="At most one copy of w moved per device", of="w",
                       fraction=1.0,
                       hint="Gather w once: a second gather (or one of w already gathered) moves it again."),
    ResultSharding(id="structure.returns_stored", title="w_stored is returned as stored: split by rows over 'data'",
                   target=RESULT_W, result="result[0]",
                   hint="Return w_stored itself, not the gathered w: the gathered copy lives only inside the forward."),
    WithinLimits(),
]
