# expect: structure
"""Places a NumPy copy of x (np.array(x)) made 'to be safe', not x itself, and sums that."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(np.array(x), NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)
