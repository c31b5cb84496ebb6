# expect: structure
"""Gathers every device's gradient onto every device, then averages locally: right numbers,
8 times the traffic of an all-reduce, and no pmean."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _gather_mean(block):
    return jax.tree.map(lambda g: jnp.mean(jax.lax.all_gather(g[0], "data"), axis=0), block)


AVERAGE = jax.jit(jax.shard_map(_gather_mean, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec(),
                                check_vma=False))


def average_gradients(grads):
    return AVERAGE(grads)
