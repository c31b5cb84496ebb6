# expect: structure
"""Sums first, then places the scalar result."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    return jax.device_put(jnp.sum(x), NamedSharding(mesh, PartitionSpec()))
