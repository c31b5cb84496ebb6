# expect: value
"""Returns x[0] * len(x), right only when every element is equal (and raises when x is empty)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return placed[0] * placed.shape[0]
