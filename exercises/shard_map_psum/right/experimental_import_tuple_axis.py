"""The older import path, jax.experimental.shard_map.shard_map, and psum over a tuple of axis
names ('data',)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.shard_map import shard_map
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _total(block):
    return jax.lax.psum(jnp.sum(block), ("data",))


_sum = jax.jit(shard_map(_total, mesh=MESH, in_specs=(PartitionSpec("data"),), out_specs=PartitionSpec()))


def sharded_sum(x):
    return _sum(x)
