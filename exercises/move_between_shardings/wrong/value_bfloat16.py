# expect: value
"""Casts to bfloat16 to make the copy cheaper: the values lose precision."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x: jax.Array) -> jax.Array:
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    placed = jax.device_put(x.astype(jnp.bfloat16), NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(placed, NamedSharding(second, PartitionSpec("data"))).astype(jnp.float32)
