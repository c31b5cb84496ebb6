# expect: structure
"""jax.device_put inside jit instead of a sharding constraint."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def _energies(m: jax.Array) -> jax.Array:
    y = jax.device_put(m * m, NamedSharding(MESH, PartitionSpec("data", None)))
    return jnp.sum(y, axis=1)


def row_energies(x: jax.Array) -> jax.Array:
    return _energies(x)
