# expect: type
"""Sums each row (axis=1) instead of each column."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
SUM_COLUMNS = jax.jit(lambda m: jnp.sum(m, axis=1),
                      in_shardings=NamedSharding(MESH, PartitionSpec("data", None)),
                      out_shardings=NamedSharding(MESH, PartitionSpec()))


def column_sums(x: jax.Array) -> jax.Array:
    return SUM_COLUMNS(x)
