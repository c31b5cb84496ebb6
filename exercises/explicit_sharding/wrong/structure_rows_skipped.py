# expect: structure
"""Reshards x straight to columns, never placing it by rows first: the result is right, but the
move from rows to columns the task is about never happens."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def reshard_columns(x):
    return jax.sharding.reshard(x, NamedSharding(MESH, PartitionSpec(None, "data")))
