# expect: structure
"""Squares first, then places the squares."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    return jax.device_put(x * x, NamedSharding(mesh, PartitionSpec("data", "model")))
