# expect: structure
"""Places x on every device whole (PartitionSpec()): the right numbers, nothing split."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_max(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.max(placed, axis=1)
