# expect: structure
"""A mesh over the first two devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:2]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)
