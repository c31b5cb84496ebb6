# expect: structure
"""No constraint at all: the compiler picks the layout. Right numbers."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def _energies(m: jax.Array) -> jax.Array:
    return jnp.sum(m * m, axis=1)


def row_energies(x: jax.Array) -> jax.Array:
    return _energies(x)
