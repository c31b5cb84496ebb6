# expect: structure
"""Places x on the first mesh, then moves the original x instead of the placed copy."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x: jax.Array) -> jax.Array:
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(x, NamedSharding(second, PartitionSpec("data")))
