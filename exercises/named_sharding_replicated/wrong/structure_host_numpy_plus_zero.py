# expect: structure
"""Places the arguments as asked, computes the sum with NumPy on the host from the original
arguments, and adds 0 times the count of the placed array's positive elements (finite even where
x is not) so the result looks computed from the placement."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.asarray(np.sum(np.asarray(x), dtype=np.float32)) + 0 * jnp.sum(placed > 0)
