# expect: structure
"""A 1x1 mesh with two axes ('data', 'model') instead of one axis."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ('data', 'model'))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)
