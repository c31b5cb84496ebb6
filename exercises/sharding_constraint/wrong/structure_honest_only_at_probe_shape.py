# expect: structure
"""Honest at the probe's shape (16 x 3); at every other shape it constrains the squares but
sums squares computed again from x, leaving the constrained value unused."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def row_energies(x):
    squares = jax.lax.with_sharding_constraint(x * x, NamedSharding(MESH, PartitionSpec("data", None)))
    return jnp.sum(squares if x.shape == (16, 3) else x * x, axis=1)
