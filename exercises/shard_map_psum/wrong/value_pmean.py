# expect: value
"""pmean instead of psum: the average of the partial sums, 8 times too small."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _block_mean(block: jax.Array) -> jax.Array:
    return jax.lax.pmean(jnp.sum(block), "data")


SUM = jax.jit(jax.shard_map(_block_mean, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec()))


def sharded_sum(x: jax.Array) -> jax.Array:
    return SUM(x)
