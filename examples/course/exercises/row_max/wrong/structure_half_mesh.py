# expect: structure
"""A mesh over half the devices: the right numbers, each device holds twice the rows."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_max(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()[:4]), ("data",))
    return jnp.max(jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None))), axis=1)
