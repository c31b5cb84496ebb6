# expect: structure
"""Moves to the second mesh replicated: every device there holds all of x."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x: jax.Array) -> jax.Array:
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(placed, NamedSharding(second, PartitionSpec()))
