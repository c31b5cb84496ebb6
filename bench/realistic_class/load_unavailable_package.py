# expect: load
"""Imports a library the grader does not install (flax) for one helper."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)
