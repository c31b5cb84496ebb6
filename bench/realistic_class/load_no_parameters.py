# expect: load
"""Reads a global instead of taking x: the function accepts no argument."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


X = jnp.arange(4.0)


def replicated_sharding_value():
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(X, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)
