"""Check helpers this course's exercises share: checks.py imports them as ``course_helpers``
(jaxgrade.toml's ``helpers`` names this folder). Students see them as they see checks.py (a
student pack carries both): keep answers out of here too."""
from grader.authoring import NamedShardingTarget, ResultSharding, Wording, placement_checks

# x split by rows along 'data', every column whole on each device.
ROWS = NamedShardingTarget(
    axis_names=("data",), spec=("data", None), match="exact",
    also_accept={("data",): "PartitionSpec('data') splits the rows the same way; writing the trailing None "
                            "says explicitly that columns stay whole."})
# One number per row, still split as the rows were.
ROW_RESULT = NamedShardingTarget(axis_names=("data",), spec=("data",))


def row_wise_checks(verb: str, result: str) -> list:
    """The structure checks of a row-wise reduction of a row-split matrix (``verb``: "sum",
    "take the maximum of"; ``result``: "sums", "maxima"): x placed by rows over every device,
    the result computed from the placed x, and the result left split along 'data'."""
    return [
        *placement_checks(
            ROWS, mesh_note="every device, one axis named 'data'",
            placed=Wording(hint=f"Place the matrix x first, then {verb} each row of the placed matrix."),
            spec=Wording(title="The spec is PartitionSpec('data', None): rows split, columns whole",
                         hint="The first entry of the spec is the rows: PartitionSpec('data', None). "
                              "PartitionSpec() replicates, and PartitionSpec(None, 'data') splits the columns."),
            from_placement=Wording(id="structure.from_placed", title=f"The {result} are computed from the placed x",
                                   hint="Reduce the array jax.device_put returned, not the original x.")),
        ResultSharding(id="structure.result_sharded", title=f"The row {result} stay split along 'data'",
                       target=ROW_RESULT,
                       hint="A row-wise reduction of a row-split matrix stays split by rows: return it as JAX "
                            "computed it."),
    ]
