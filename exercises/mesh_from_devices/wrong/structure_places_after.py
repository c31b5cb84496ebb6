# expect: structure
"""Computes first, then places the result: x itself never goes onto the mesh."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("data", "model"))
    return jax.device_put(x * mesh.size, NamedSharding(mesh, PartitionSpec()))
