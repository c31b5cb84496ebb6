# expect: structure
"""Wrong: eight psum_scatters in a fori_loop, each of a part of the gradient (halves, quarters,
... that add up to all of it), moving eight slices per device where one is the task's."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _scatter(rows: jax.Array) -> jax.Array:
    parts = jnp.array([0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.0078125], rows.dtype)
    start = jax.lax.psum_scatter(jnp.zeros_like(rows[0]), "data", scatter_dimension=0, tiled=True)
    return jax.lax.fori_loop(0, 8, lambda i, acc: acc + jax.lax.psum_scatter(rows[0] * parts[i], "data",
                                                                            scatter_dimension=0, tiled=True), start)


REDUCE = jax.jit(jax.shard_map(_scatter, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec("data")))


def reduce_scatter_grads(grads: jax.Array) -> jax.Array:
    return REDUCE(grads)
