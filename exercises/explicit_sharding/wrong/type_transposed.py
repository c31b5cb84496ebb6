# expect: type
"""Confuses moving to columns with transposing: reshards the transpose by rows and returns it,
shape (c, r) instead of (r, c)."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def reshard_columns(x):
    rows = jax.device_put(x, NamedSharding(MESH, PartitionSpec("data", None)))
    return jax.sharding.reshard(rows.T, NamedSharding(MESH, PartitionSpec("data", None)))
