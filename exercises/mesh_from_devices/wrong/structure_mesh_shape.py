# expect: structure
"""A 4 x 1 grid: the right devices and names, the wrong shape (same mesh.size)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(4, 1), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return placed * mesh.size
