# expect: structure
"""Squares under jax.jit and pins the blocks with with_sharding_constraint instead of placing x
with jax.device_put: the right blocks come back, but x itself is never placed."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


@jax.jit
def square_blocks(x):
    m = jax.lax.with_sharding_constraint(x, NamedSharding(MESH, PartitionSpec("data", "model")))
    return m * m
