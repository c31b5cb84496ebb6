"""A Python loop over chunks of 1,000 elements, one eager slice and sum each: correct, but slow on long vectors."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    total = jnp.zeros((), jnp.float32)
    for start in range(0, placed.shape[0], 1000):
        total = total + jnp.sum(placed[start:start + 1000])
    return total
