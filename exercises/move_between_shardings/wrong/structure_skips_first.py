# expect: structure
"""Puts x straight onto the second mesh: the right final layout, no move from the first."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x: jax.Array) -> jax.Array:
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    return jax.device_put(x, NamedSharding(second, PartitionSpec("data")))
