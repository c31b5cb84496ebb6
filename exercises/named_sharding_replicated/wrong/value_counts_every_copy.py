# expect: value
"""Sums every device's copy: replicated over all 8 devices, the sum comes out 8 times too large."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    total = sum(float(jnp.sum(shard.data)) for shard in placed.addressable_shards)
    return jnp.asarray(total, dtype=jnp.float32)
