# expect: structure
"""in_shardings replicates x: every device sums every row."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
REPLICATED = NamedSharding(MESH, PartitionSpec())
SUM_ROWS = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=REPLICATED, out_shardings=REPLICATED)


def column_sums(x: jax.Array) -> jax.Array:
    return SUM_ROWS(x)
