# expect: structure
"""Moves everything onto device 4 alone."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x: jax.Array) -> jax.Array:
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(placed, jax.devices()[4])
