# expect: limits
"""Allocates far more memory than the limit allows."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    hog = np.ones((64, 1 << 27), dtype=np.float32)
    return jnp.sum(x) + hog[0, 0]
