"""Checks for pipeline_shift, built from the grader's check library.

Eight pipeline stages, one per device, each holding one row of x; every stage hands its row to
the next (stage 7's to stage 0) with one ``ppermute``. The values are ``np.roll(x, 1, axis=0)``,
moved, never computed, so they must match bit for bit. Structure: the shard_map over all devices
with axis 'stage' that splits x and the result by rows; a ppermute over 'stage' that is a cyclic
shift by +1; what XLA runs (a collective-permute, nothing that gathers, reduces or exchanges all
to all, one row moved per device); and which device holds which row of the result.
"""
import numpy as np

from grader.authoring import (Array, AvoidsPrimitives, CommunicatesAtMost, CyclicShift, LoadsFunction,
                              NamedShardingTarget, Returns, ShardLayout, Signature, SpecMatches, UsesCollective,
                              UsesPrimitive, ValueProperty, Wording, WithinLimits, arguments, dims, float32_array,
                              no_tolerance, placement_checks)

STAGES = 8
SIGNATURE = Signature({"x": Array("float32", (STAGES, "n"))}, returns=Array("float32", (STAGES, "n")))

# Distinct values, 16 per row (a length no value test uses): every row, and so every block, differs.
PROBE = {"x": np.arange(STAGES * 16, dtype=np.float32).reshape(STAGES, 16) * 0.5 - 17.25}


def rolled(x: np.ndarray) -> np.ndarray:
    """Row i of the answer is row i - 1 of x (row 0 is row 7): what stage i receives."""
    return np.roll(np.asarray(x, np.float32), 1, axis=0)


# n may be 0 (rows of nothing: the stages still exchange their empty rows).
INPUTS = arguments(dims(n=(0, 1, 3, 24)), x=float32_array((STAGES, "n"), bound=1e30))

MESH = dict(axis_names=("stage",), devices=(None, None))
ROWS = {("stage", None): "PartitionSpec('stage', None) splits the rows the same way."}
# x enters shard_map split by rows, one row per stage.
X_IN = NamedShardingTarget(**MESH, spec=("stage",), via="shard_map_in", operand="x", also_accept=ROWS)
# The shifted rows leave shard_map as they are, one per stage, and are returned so.
RESULT_OUT = NamedShardingTarget(**MESH, spec=("stage",), via="shard_map_out", operand="result", also_accept=ROWS)
RESULT = NamedShardingTarget(**MESH, spec=("stage",), operand="result", also_accept=ROWS)

CHECKS = [
    LoadsFunction(),  # "The file loads and defines pipeline_shift(x)"
    Returns(id="type.like_x", title="Returns a float32 JAX array shaped like x, (8, n)",
            hint="out_specs=PartitionSpec('stage') puts the eight one-row blocks back together into (8, n)."),
    ValueProperty(id="value.rows_shifted", title="Row i of the result is row i - 1 of x, row 0 is row 7 (Hypothesis)",
                  inputs=INPUTS, expected=rolled, tolerance=no_tolerance,
                  hint="Stage i sends to stage (i + 1) % 8: perm=[(i, (i + 1) % 8) for i in range(8)]. The other "
                       "direction gives jnp.roll(x, -1, axis=0)."),
    # structure.shard_map, structure.mesh, structure.in_spec, structure.from_blocks
    *placement_checks(
        X_IN, mesh_note="all 8 devices, one axis named 'stage'",
        placed=Wording(id="structure.shard_map",
                       hint="jax.shard_map(f, mesh=Mesh(np.array(jax.devices()), ('stage',)), "
                            "in_specs=PartitionSpec('stage'), out_specs=PartitionSpec('stage')), called on x."),
        spec=Wording(id="structure.in_spec", title="in_specs gives each stage one row: PartitionSpec('stage')",
                     hint="in_specs=PartitionSpec('stage') splits x by rows; PartitionSpec() hands every stage all "
                          "of x, and then no row has to move."),
        from_placement=Wording(id="structure.from_blocks",
                               title="The result is computed from the rows shard_map hands the stages",
                               hint="Send the block your per-stage function receives: not x captured from outside, "
                                    "not a copy made on the host.")),
    SpecMatches(id="structure.out_spec", title="out_specs gives the rows back one per stage: PartitionSpec('stage')",
                target=RESULT_OUT,
                hint="out_specs=PartitionSpec('stage'): each stage's received row is its block of the result."),
    UsesPrimitive(id="structure.ppermute", title="A ppermute over 'stage' sends stage i's row to stage (i + 1) % 8",
                  operation="ppermute", axes=("stage",), inside="shard_map", params={"perm": CyclicShift(1)},
                  hint="Inside the per-stage function: jax.lax.ppermute(block, 'stage', "
                       "perm=[(i, (i + 1) % 8) for i in range(8)])."),
    AvoidsPrimitives(id="structure.no_gather_or_reduce", title="Nothing gathers, reduces or leaves JAX",
                     operations=("all_gather", "psum", "psum_scatter", "all_to_all", "pmax", "pmin"), host=True,
                     why="A shift moves one row per stage: gathering every row, or summing rows placed in zeros, "
                         "moves eight times as much to get the same numbers."),
    UsesCollective(id="structure.compiled_permute",
                   title="XLA runs a collective-permute, and no all-gather, all-reduce, reduce-scatter or all-to-all",
                   kind="collective-permute", instead_of=("all-gather", "all-reduce", "reduce-scatter", "all-to-all"),
                   hint="One ppermute inside shard_map compiles to one collective-permute."),
    # One row of x (1/8 of it) arrives at each device, once.
    CommunicatesAtMost(id="structure.one_row_moved", title="Each device receives one row, once", of="x",
                       fraction=1 / STAGES,
                       hint="One ppermute of the one-row block: a second exchange, or one of more than the block, "
                            "moves more."),
    ShardLayout(id="structure.rows_on_stages",
                title="Stage i (jax.devices()[i]) holds row i of the result, which is row i - 1 of x",
                target=RESULT,
                hint="Build the mesh from jax.devices() in order and return shard_map's result as it is: each "
                     "device keeps the row it received."),
    WithinLimits(),
]
