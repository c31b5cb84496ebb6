# expect: type
"""Returns the constrained squares themselves instead of their row sums."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def _energies(m: jax.Array) -> jax.Array:
    return jax.lax.with_sharding_constraint(m * m, NamedSharding(MESH, PartitionSpec("data", None)))


def row_energies(x: jax.Array) -> jax.Array:
    return _energies(x)
