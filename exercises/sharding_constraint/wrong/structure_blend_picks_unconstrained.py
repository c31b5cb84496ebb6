# expect: structure
"""Constrains the squares inside jax.jit, then blends the row sums of the constrained squares
with row sums computed again from x, by a weight that is exactly 1 for the recomputed ones in
an ordinary call (the two agree) and 0 as soon as the constrained value differs. No boolean is
made, so only a derivative at the call's own values tells."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def row_energies(x):
    squares = jax.lax.with_sharding_constraint(x * x, NamedSharding(MESH, PartitionSpec("data", None)))
    again = x * x
    distance = jnp.sum(jnp.nan_to_num(jnp.abs(squares - again), nan=0.0, posinf=0.0))
    weight = jnp.exp(-1e30 * distance)
    pick = (1 - weight).astype(jnp.int32)
    return jnp.stack([jnp.sum(again, axis=1), jnp.sum(squares, axis=1)])[pick]
