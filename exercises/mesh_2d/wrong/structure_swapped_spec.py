# expect: structure
"""The spec names the axes the other way round: rows over model, columns over data."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("model", "data")))
    return placed * placed
