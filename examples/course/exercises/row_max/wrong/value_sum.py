# expect: value
"""Sums each row instead of taking its maximum: placed and split as asked, the wrong numbers."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_max(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    return jnp.sum(placed, axis=1)
