# expect: structure
"""Replicates the matrix on every device instead of splitting its rows: right numbers."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_sums(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed, axis=1)
