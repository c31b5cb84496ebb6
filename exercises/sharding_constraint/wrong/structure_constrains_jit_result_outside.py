# expect: structure
"""Squares inside jax.jit but "constrains" by calling with_sharding_constraint on the jitted
function's result outside it (the squares come back from the jit): an eager move, not a
constraint inside the compiled program."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
square = jax.jit(lambda m: m * m)


def row_energies(x):
    y = jax.lax.with_sharding_constraint(square(x), NamedSharding(MESH, PartitionSpec("data", None)))
    return jax.jit(lambda s: jnp.sum(s, axis=1))(y)
