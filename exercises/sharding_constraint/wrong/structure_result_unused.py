# expect: structure
"""Calls with_sharding_constraint but sums the unconstrained squares."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def _energies(m: jax.Array) -> jax.Array:
    y = m * m
    jax.lax.with_sharding_constraint(y, NamedSharding(MESH, PartitionSpec("data", None)))
    return jnp.sum(y, axis=1)


def row_energies(x: jax.Array) -> jax.Array:
    return _energies(x)
