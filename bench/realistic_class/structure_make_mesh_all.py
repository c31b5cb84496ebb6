# expect: structure
"""jax.make_mesh over all 8 devices instead of jax.devices()[:1]."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = jax.make_mesh((jax.device_count(),), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)
