# expect: structure
"""Places and sums correctly, then copies the row sums onto every device (PartitionSpec())
"so every device has them": the result is no longer split along 'data'."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_sums(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    return jax.device_put(jnp.sum(placed, axis=1), NamedSharding(mesh, PartitionSpec()))
