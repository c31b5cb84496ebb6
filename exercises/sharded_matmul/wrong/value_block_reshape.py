# expect: value
"""Multiplies one block of rows per device, x.reshape(8, -1, k) @ w, and flattens the blocks
back with reshape(-1, m): right whenever k and m are positive, a reshape error when x has no
columns or w none (the -1 cannot be inferred from an empty array), which the statement allows."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    blocks = rows.reshape(8, -1, x.shape[1]) @ everywhere
    return blocks.reshape(-1, w.shape[1])
