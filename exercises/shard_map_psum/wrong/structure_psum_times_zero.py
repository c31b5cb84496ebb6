# expect: structure
"""Sums x with NumPy on the host and adds 0 times a psum inside shard_map: the collective is
there and reads the split x, but the total does not depend on it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def sharded_sum(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    psummed = jax.shard_map(lambda block: jax.lax.psum(jnp.sum(block), "data"), mesh=mesh,
                            in_specs=PartitionSpec("data"), out_specs=PartitionSpec())(x)
    return jnp.float32(np.sum(np.asarray(x), dtype=np.float32)) + 0 * psummed
