# expect: structure
"""One psum_scatter in the program's text, inside a fori_loop that runs it eight times, each on
the rows scaled by a power of two (so XLA cannot hoist it out of the loop) and scaled back, then
averages the eight equal results: the values are right and one reduce-scatter is written, but it
moves eight times the traffic the task allows."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _scatter(rows):
    def again(i, total):
        scale = jnp.exp2(i.astype(rows.dtype))
        scattered = jax.lax.psum_scatter(rows[0] * scale, "data", scatter_dimension=0, tiled=True)
        return total + scattered / scale / 8
    start = jnp.where(True, 0.0, rows[0, : rows.shape[1] // 8])  # zeros that vary over 'data', as the sum does
    return jax.lax.fori_loop(0, 8, again, start)


REDUCE = jax.jit(jax.shard_map(_scatter, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec("data")))


def reduce_scatter_grads(grads):
    return REDUCE(grads)
