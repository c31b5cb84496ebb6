# expect: structure
"""The mesh names its axes (model, data): model has size 2 and data size 4."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("model", "data"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    return placed * placed
