# expect: structure
"""Places x on the right mesh, then scales it with NumPy and converts back with jnp.asarray:
right numbers, but the result is on the default device and not computed by JAX from the placed
array."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x):
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.asarray(np.asarray(placed) * mesh.size)
