# expect: structure
"""Places x on a device instead of a NamedSharding over a mesh."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    placed = jax.device_put(x, jax.devices()[0])
    return jnp.sum(placed)
