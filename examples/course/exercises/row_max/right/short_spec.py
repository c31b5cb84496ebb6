"""PartitionSpec('data'): the trailing None left out splits the rows the same way."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_max(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()), ("data",))
    return jnp.max(jax.device_put(x, NamedSharding(mesh, PartitionSpec("data"))), axis=1)
