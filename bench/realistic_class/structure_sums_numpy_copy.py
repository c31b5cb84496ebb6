# expect: structure
"""Places x, then sums a NumPy copy of it and converts back: the sum never reads the placed array."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.asarray(np.sum(np.asarray(x)), dtype=jnp.float32)
