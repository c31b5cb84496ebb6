# expect: structure
"""Only out_shardings: x enters the jit wherever it happens to be. Right numbers."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
SUM_ROWS = jax.jit(lambda m: jnp.sum(m, axis=0), out_shardings=NamedSharding(MESH, PartitionSpec()))


def column_sums(x: jax.Array) -> jax.Array:
    return SUM_ROWS(x)
