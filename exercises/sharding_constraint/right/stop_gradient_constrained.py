"""Constrains the squares inside jax.jit and sums them through stop_gradient, as code written
for training guards a value: the row sums are still those of the constrained squares."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

ROWS = NamedSharding(Mesh(np.array(jax.devices()), ("data",)), PartitionSpec("data", None))


def row_energies(x):
    return jax.jit(lambda m: jnp.sum(jax.lax.stop_gradient(jax.lax.with_sharding_constraint(m * m, ROWS)), axis=1))(x)
