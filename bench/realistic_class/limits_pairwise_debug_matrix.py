# expect: limits
"""Leaves in a debugging aid that builds the n x n matrix of pairwise sums: 40 GB for a long vector."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    pairwise = np.add.outer(np.asarray(x), np.asarray(x))  # to eyeball the values while debugging
    return jnp.sum(placed)
