# expect: limits
"""Raises KeyboardInterrupt to 'stop early' on an empty vector, which ends a real program."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    if x.size == 0:
        raise KeyboardInterrupt
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)
