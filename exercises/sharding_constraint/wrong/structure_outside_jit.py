# expect: structure
"""Constrains outside jit (it just moves the squares), then sums in plain JAX."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _constrain(y: jax.Array) -> jax.Array:
    return jax.lax.with_sharding_constraint(y, NamedSharding(MESH, PartitionSpec("data", None)))


def row_energies(x: jax.Array) -> jax.Array:
    return jnp.sum(_constrain(x * x), axis=1)
