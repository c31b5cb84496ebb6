# expect: value
"""Multiplies the pmean by the number of devices, "to undo the division": that is the sum again."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _scaled(block):
    mean = jax.lax.pmean(jax.tree.map(lambda g: g[0], block), "data")
    return jax.tree.map(lambda g: g * len(jax.devices()), mean)


SCALED = jax.jit(jax.shard_map(_scaled, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec()))


def average_gradients(grads):
    return SCALED(grads)
