# expect: structure
"""Wrong: the psum_scatter runs in a while loop whose trip count comes from the data (two halves
of the gradient, each scattered; reading the carry keeps XLA from hoisting the scatter out of the
loop), so the traffic has no bound a count of the program shows."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _scatter(rows: jax.Array) -> jax.Array:
    half = rows[0] * 0.5
    trips = 2 + (jnp.sum(rows) * 0).astype(jnp.int32)
    zero = jax.lax.psum_scatter(jnp.zeros_like(half), "data", scatter_dimension=0, tiled=True)
    return jax.lax.fori_loop(0, trips, lambda i, acc: acc + jax.lax.psum_scatter(half * (1.0 + acc[0] * 0.0), "data", scatter_dimension=0,
                                                                                tiled=True), zero)


REDUCE = jax.jit(jax.shard_map(_scatter, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec("data")))


def reduce_scatter_grads(grads: jax.Array) -> jax.Array:
    return REDUCE(grads)
