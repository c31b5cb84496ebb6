# expect: structure
"""Reshards the rows to a replicated copy (an all-gather: all of x on every device), then to
columns (each device keeps its slice): the right layout, by moving x whole to every device."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def reshard_columns(x):
    rows = jax.device_put(x, NamedSharding(MESH, PartitionSpec("data", None)))
    whole = jax.sharding.reshard(rows, NamedSharding(MESH, PartitionSpec()))
    return jax.sharding.reshard(whole, NamedSharding(MESH, PartitionSpec(None, "data")))
