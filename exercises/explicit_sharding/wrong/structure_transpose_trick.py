# expect: structure
"""Places x.T by rows and transposes it back: the rows of x.T are the columns of x, so the result
is split by columns, in its type too, and nothing is resharded, because x itself was never placed
by rows."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def reshard_columns(x):
    return jax.device_put(x.T, NamedSharding(MESH, PartitionSpec("data", None))).T
