# expect: structure
"""Shards x over all 8 devices with PartitionSpec('data'): crashes unless the length divides by 8."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec('data')))
    return jnp.sum(placed)
