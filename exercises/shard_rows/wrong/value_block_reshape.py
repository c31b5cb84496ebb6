# expect: value
"""Reshapes the placed matrix into one block of rows per device, x.reshape(8, -1, columns), sums
within each block and flattens: right whenever x has columns, a reshape error when it has none
(the -1 cannot be inferred from an empty array)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_sums(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    blocks = placed.reshape(8, -1, x.shape[1])
    return jnp.sum(blocks, axis=2).reshape(-1)
