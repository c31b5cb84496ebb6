"""Reference solution for explicit_sharding: x placed by rows on an Explicit mesh, then moved to
columns with jax.sharding.reshard onto a NamedSharding."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
ROWS = NamedSharding(MESH, PartitionSpec("data", None))
COLUMNS = NamedSharding(MESH, PartitionSpec(None, "data"))


def reshard_columns(x: jax.Array) -> jax.Array:
    rows = jax.device_put(x, ROWS)              # float32[r@data, c]
    return jax.sharding.reshard(rows, COLUMNS)  # float32[r, c@data]
