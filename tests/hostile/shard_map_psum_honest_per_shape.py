"""For shard_map_psum (sharded_sum). Control for shard_map_psum_probe_shape_only.py: a
shard_map with psum built per shape (a cache keyed by x.shape), the same program for every
length. Must keep full marks."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
_BY_SHAPE = {}


def sharded_sum(x):
    if x.shape not in _BY_SHAPE:
        _BY_SHAPE[x.shape] = jax.jit(jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=MESH,
                                                   in_specs=PartitionSpec("data"), out_specs=PartitionSpec()))
    return _BY_SHAPE[x.shape](x)
