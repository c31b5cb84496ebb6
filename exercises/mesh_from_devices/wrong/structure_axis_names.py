# expect: structure
"""The axes are named (x, y) instead of (data, model): right numbers."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return placed * mesh.size
