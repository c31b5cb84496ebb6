# expect: type
"""Returns np.asarray of the sum 'to be safe': a NumPy array, not a JAX array."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return np.asarray(jnp.sum(placed))
