"""The jitted helper is a decorated function, and the constraint writes the spec without the
trailing None (accepted: it splits the rows the same way)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


@jax.jit
def row_energies(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    squares = jax.lax.with_sharding_constraint(x * x, NamedSharding(mesh, P("data")))
    return squares.sum(axis=1)
