# expect: value
"""The mean of each row instead of its sum."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_sums(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    return jnp.mean(placed, axis=1)
