# expect: structure
"""An Explicit mesh over jax.devices() in reverse order: the values and specs are right, but device
i holds the wrong block of columns."""
import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,), devices=np.array(jax.devices()[::-1]))


def reshard_columns(x):
    rows = jax.device_put(x, NamedSharding(MESH, PartitionSpec("data", None)))
    return jax.sharding.reshard(rows, NamedSharding(MESH, PartitionSpec(None, "data")))
