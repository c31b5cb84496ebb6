# expect: value
"""Squares in float16 "to halve the memory" and converts back: squares above float16's largest
value (65504) overflow to inf, tiny ones flush to zero, and the rest keep only 11 bits."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    return jnp.square(placed.astype(jnp.float16)).astype(jnp.float32)
