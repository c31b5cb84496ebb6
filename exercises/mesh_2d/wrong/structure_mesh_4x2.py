# expect: structure
"""A 4 x 2 grid: same devices and names, other axis sizes."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    return placed * placed
