# expect: structure
"""Places the arguments as asked, then computes the sum with JAX from the ORIGINAL arguments and
adds 0 times the count of the placed array's positive elements (finite even where x is not): a
dataflow link from the placed value exists, but the result does not depend on it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(x, dtype=jnp.float32) + 0 * jnp.sum(placed > 0)
