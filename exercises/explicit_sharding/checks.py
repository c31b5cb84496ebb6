"""Checks for explicit_sharding, built from the grader's check library.

On a mesh whose axis is ``AxisType.Explicit`` the sharding is part of an array's type
(``jax.typeof(x)`` reads ``float32[16@data,24]``), and ``jax.sharding.reshard`` changes the type
and the layout together. x is placed by rows, then moved to columns: the values are x itself, bit
for bit. Structure: the first placement (all 8 devices, axis 'data', Explicit, rows split), the
result computed from it, the move a ``reshard`` reading x, what XLA runs for it (an all-to-all,
nothing gathered or summed, at most 1/8 of x received per device), the result's type and which
device holds which block of columns."""
import numpy as np

from grader.authoring import (Array, CommunicatesAtMost, LoadsFunction, MeshAxisTypes,
                              NamedShardingTarget, Returns, ShardLayout, Signature, TypedSharding, UsesCollective,
                              UsesPrimitive, ValueProperty, Wording, WithinLimits, arguments, exactly, float32_array,
                              no_tolerance, placement_checks, shapes)

DEVICES = 8
SIGNATURE = Signature({"x": Array("float32", "r c")}, returns=Array("float32", "r c"))

# Distinct values, 16 rows and 24 columns (sizes no value test uses, and different, so a transposed
# result cannot have the declared shape): two rows and three columns per device.
PROBE = {"x": np.arange(16 * 24, dtype=np.float32).reshape(16, 24) * 0.25 - 41.5}

# Multiples of 8 (the mesh splits both axes evenly); either may be 0.
INPUTS = arguments(shapes("r c", (0, 8), (8, 0), (0, 0), (8, 8), (8, 32), (32, 16)),
                   x=float32_array("r c", bound=1e30))

MESH = dict(axis_names=("data",), devices=(None, None))
# x itself, placed by rows on all 8 devices.
ROWS = NamedShardingTarget(**MESH, spec=("data", None), operand="x", match="exact",
                           also_accept={("data",): "PartitionSpec('data') splits the rows the same way."})
# What is returned: split by columns.
COLUMNS = NamedShardingTarget(**MESH, spec=(None, "data"), operand="result", match="derived")

CHECKS = [
    LoadsFunction(),  # "The file loads and defines reshard_columns(x)"
    Returns(id="type.like_x", title="Returns a float32 JAX array shaped like x, (r, c)",
            hint="Return the resharded array itself: resharding moves blocks, it does not transpose."),
    ValueProperty(id="value.unchanged", title="Resharding changes no value (Hypothesis)", inputs=INPUTS,
                  expected=exactly, tolerance=no_tolerance,
                  hint="Moving an array between shardings copies its values bit for bit: no arithmetic, no "
                       "transposition."),
    # structure.placed, structure.mesh, structure.spec, structure.from_placed
    *placement_checks(
        ROWS, mesh_note="all 8 devices, one axis named 'data' (jax.make_mesh((8,), ('data',), "
                        "axis_types=(AxisType.Explicit,)))",
        spec=Wording(title="x is first placed by rows: PartitionSpec('data', None)",
                     hint="jax.device_put(x, NamedSharding(mesh, PartitionSpec('data', None))): rows split, "
                          "columns whole."),
        from_placement=Wording(title="The result is computed from the rows placement",
                               hint="Reshard the array jax.device_put returned, not x itself or a copy from the "
                                    "host.")),
    MeshAxisTypes(id="structure.explicit_mesh", title="x is placed on a mesh whose axis is AxisType.Explicit",
                  target=ROWS, axis_types=("Explicit",),
                  hint="jax.make_mesh((8,), ('data',), axis_types=(AxisType.Explicit,)): on a Mesh of Auto axes "
                       "the sharding is not part of the type, and reshard refuses bare specs."),
    UsesPrimitive(id="structure.reshard", title="The move is a jax.sharding.reshard of the placed x",
                  operation="reshard", reads="x",
                  hint="jax.sharding.reshard(rows, NamedSharding(mesh, PartitionSpec(None, 'data'))), or with a "
                       "bare PartitionSpec(None, 'data') under jax.set_mesh(mesh); not jax.device_put, not a "
                       "transpose."),
    UsesCollective(id="structure.all_to_all",
                   title="XLA moves the blocks with an all-to-all, and no all-gather or all-reduce",
                   kind="all-to-all", instead_of=("all-gather", "all-reduce"),
                   hint="From rows to columns each device keeps 1/8 of its block and sends each other device "
                        "1/8: one all-to-all. Gathering x whole and slicing moves 8 times as much."),
    # Only XLA's collectives are counted: a jax.device_put between shardings or a trip through the
    # host moves bytes no collective shows (those variants fail structure.reshard instead).
    CommunicatesAtMost(id="structure.one_eighth_moved", title="XLA's collectives move at most 1/8 of x to each device",
                       of="x", fraction=1 / DEVICES,
                       hint="One reshard from rows to columns: a gather, a replicated copy, or a second move "
                            "receives more."),
    TypedSharding(id="structure.typed_columns",
                  title="The result's type states PartitionSpec(None, 'data') on an Explicit mesh",
                  spec=(None, "data"), axis_names=("data",), axis_types=("Explicit",),
                  hint="jax.typeof(result) should read float32[r,c@data]: reshard to PartitionSpec(None, "
                       "'data') on the Explicit mesh."),
    ShardLayout(id="structure.column_blocks",
                title="Device i (jax.devices()[i]) holds the i-th block of columns, every row",
                target=COLUMNS,
                hint="Build the mesh over jax.devices() in order and return the resharded array as it is."),
    WithinLimits(),
]
