# expect: structure
"""Places the arguments as asked, then computes the row sums with JAX from the ORIGINAL arguments
and adds 0 times the count of positive elements in each placed row (finite even where x is not):
a dataflow link from the placed value exists, but the result does not depend on it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_sums(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    return jnp.sum(x, axis=1) + 0 * jnp.sum(placed > 0, axis=1)
