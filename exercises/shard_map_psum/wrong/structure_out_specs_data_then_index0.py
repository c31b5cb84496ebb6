# expect: structure
"""psums inside shard_map but returns the per-device totals with out_specs=PartitionSpec('data')
(eight copies of the total, one per device) and takes the first: the number is right, but the
result is one device's copy, not the total shard_map gives every device."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def sharded_sum(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    totals = jax.shard_map(lambda block: jax.lax.psum(jnp.sum(block), "data")[None], mesh=mesh,
                           in_specs=PartitionSpec("data"), out_specs=PartitionSpec("data"))(x)
    return totals[0]
