# expect: structure
"""Constrains the row sums (split along 'data') instead of the squares: right numbers, a
constraint inside jax.jit on the right mesh, but on the wrong value."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def _energies(m):
    sums = jnp.sum(m * m, axis=1)
    return jax.lax.with_sharding_constraint(sums, NamedSharding(MESH, PartitionSpec("data")))


def row_energies(x):
    return _energies(x)
