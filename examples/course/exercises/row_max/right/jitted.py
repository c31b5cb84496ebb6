"""Places x by rows, then takes the row maxima inside jax.jit."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


@jax.jit
def _maxima(placed: jax.Array) -> jax.Array:
    return jnp.max(placed, axis=1)


def row_max(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()), ("data",))
    return _maxima(jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None))))
