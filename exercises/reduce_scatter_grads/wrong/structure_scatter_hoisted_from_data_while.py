# expect: structure
"""Wrong: the psum_scatter is written once, in a while loop whose trip count comes from the data
(two halves of the gradient, each scattered), on the same rows every step: XLA moves it out of the
loop and runs it once here, but as written it runs once per step of a loop no count bounds (12/12
before issue #64; structure_scatters_in_data_while.py reads the carry, so XLA keeps it inside)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _scatter(rows):
    trips = 2 + (jnp.sum(rows) * 0).astype(jnp.int32)
    start = jnp.where(True, 0.0, rows[0, : rows.shape[1] // 8])  # zeros that vary over "data"
    body = lambda s: (s[0] + 1, s[1] + jax.lax.psum_scatter(rows[0] / 2, "data", scatter_dimension=0, tiled=True))
    return jax.lax.while_loop(lambda s: s[0] < trips, body, (0, start))[1]


REDUCE = jax.jit(jax.shard_map(_scatter, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec("data")))


def reduce_scatter_grads(grads):
    return REDUCE(grads)
