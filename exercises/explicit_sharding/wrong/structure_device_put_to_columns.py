# expect: structure
"""jax.device_put of the placed rows onto the columns sharding, instead of jax.sharding.reshard:
the same layout and type, but not the reshard the task asks for."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def reshard_columns(x):
    rows = jax.device_put(x, NamedSharding(MESH, PartitionSpec("data", None)))
    return jax.device_put(rows, NamedSharding(MESH, PartitionSpec(None, "data")))
