# expect: structure
"""The second mesh lists its devices backwards: device 7 gets the first quarter."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x: jax.Array) -> jax.Array:
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    backwards = Mesh(np.array(jax.devices()[4:][::-1]), ("data",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(placed, NamedSharding(backwards, PartitionSpec("data")))
