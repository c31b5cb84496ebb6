# expect: structure
"""Honest at the probe's shape (16 elements); at every other shape it runs the shard_map with
its psum, but returns jnp.sum of the original x instead."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def sharded_sum(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    total = jax.shard_map(lambda block: jax.lax.psum(jnp.sum(block), "data"), mesh=mesh,
                          in_specs=PartitionSpec("data"), out_specs=PartitionSpec())(x)
    return total if x.shape == (16,) else jnp.sum(x) + 0 * total
