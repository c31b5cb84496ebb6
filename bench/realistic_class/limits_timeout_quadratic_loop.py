# expect: limits
"""An eager Python loop over pairs of elements: quadratic, so long vectors take minutes."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    total = jnp.float32(0)
    for i in range(placed.shape[0]):
        for j in range(i + 1):
            total = total + (placed[i] if j == i else 0.0)
    return total
