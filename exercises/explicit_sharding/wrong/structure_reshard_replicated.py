# expect: structure
"""Reshards onto PartitionSpec() (replicated) instead of columns: every device gathers all of x."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def reshard_columns(x):
    rows = jax.device_put(x, NamedSharding(MESH, PartitionSpec("data", None)))
    return jax.sharding.reshard(rows, NamedSharding(MESH, PartitionSpec()))
