# expect: structure
"""Only in_shardings: the output layout is left to the compiler."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
SUM_ROWS = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=NamedSharding(MESH, PartitionSpec("data", None)))


def column_sums(x: jax.Array) -> jax.Array:
    return SUM_ROWS(x)
