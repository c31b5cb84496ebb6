# expect: structure
"""Places x as asked, then takes the maxima of the original x: the placed copy is never used."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_max(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()), ("data",))
    jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    return jnp.max(x, axis=1)
