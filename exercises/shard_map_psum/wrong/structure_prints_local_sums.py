# expect: structure
"""Eager shard_map returns each device's partial sum (out_specs=PartitionSpec('data')), prints
where they live, and adds them outside: the right number, no collective. Printing .sharding
makes it untraceable, so it is judged from the real call."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def sharded_sum(x):
    partials = jax.shard_map(lambda block: jnp.sum(block, keepdims=True), mesh=MESH,
                             in_specs=PartitionSpec("data"), out_specs=PartitionSpec("data"))(x)
    print("partial sums on", partials.sharding)
    return jnp.sum(partials)
