# expect: value
"""Each device contributes its block's mean times the block's length: the same partial sums for
every x with elements, NaN for the empty x (0/0 times 0), which the statement allows (0 is a
multiple of 8)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _block(block):
    return jax.lax.psum(jnp.mean(block) * block.shape[0], "data")


SUM = jax.jit(jax.shard_map(_block, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec()))


def sharded_sum(x):
    return SUM(x)
