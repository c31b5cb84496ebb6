# expect: structure
"""Constrains the squares inside jax.jit as asked, but returns row sums of squares computed
again from x, plus 0 times the row sums of the constrained ones: a dataflow link that carries
nothing."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def row_energies(x):
    squares = jax.lax.with_sharding_constraint(x * x, NamedSharding(MESH, PartitionSpec("data", None)))
    return jnp.sum(x * x, axis=1) + 0.0 * jnp.sum(squares, axis=1)
