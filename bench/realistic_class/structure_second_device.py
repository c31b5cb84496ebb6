# expect: structure
"""Places x on jax.devices()[1] directly, with no mesh."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    placed = jax.device_put(x, jax.devices()[1])
    return jnp.sum(placed)
