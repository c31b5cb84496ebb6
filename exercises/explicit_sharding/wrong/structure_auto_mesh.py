# expect: structure
"""A mesh of Auto axes (Mesh(devices, names) as older tutorials write it): reshard refuses a spec
over Auto axes, so the columns come from a jitted identity with out_shardings. The layout is
right, but the sharding is no part of the arrays' type, and nothing is resharded."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
COLUMNS = NamedSharding(MESH, PartitionSpec(None, "data"))
_to_columns = jax.jit(lambda a: a, out_shardings=COLUMNS)


def reshard_columns(x):
    rows = jax.device_put(x, NamedSharding(MESH, PartitionSpec("data", None)))
    return _to_columns(rows)
