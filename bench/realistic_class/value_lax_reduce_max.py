# expect: value
"""jax.lax.reduce with lax.max: a maximum, not a sum."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jax.lax.reduce(placed, np.float32(-np.inf), jax.lax.max, (0,))
