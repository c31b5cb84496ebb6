"""The reshard inside a jitted function (jax.jit compiles the all-to-all as its own program); the
placement by rows before it, eagerly."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


@jax.jit
def to_columns(rows):
    return jax.sharding.reshard(rows, NamedSharding(MESH, PartitionSpec(None, "data")))


def reshard_columns(x):
    rows = jax.device_put(x, NamedSharding(MESH, PartitionSpec("data", None)))
    return to_columns(rows)
