# expect: structure
"""The wrong target spec: reshards to PartitionSpec('data', None) (rows, where it already is)
instead of PartitionSpec(None, 'data'): the values are right and nothing moves."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def reshard_columns(x):
    rows = jax.device_put(x, NamedSharding(MESH, PartitionSpec("data", None)))
    return jax.sharding.reshard(rows, NamedSharding(MESH, PartitionSpec("data", None)))
