# expect: structure
"""jax.device_put(x) with no sharding: commits to the default device only."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    placed = jax.device_put(x)
    return jnp.sum(placed)
