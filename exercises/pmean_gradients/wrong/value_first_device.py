# expect: value
"""Turns off shard_map's replication check and skips the pmean: the "average" is whichever
device's own gradient comes back (device 0's)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _own(block):
    return jax.tree.map(lambda g: g[0], block)


OWN = jax.jit(jax.shard_map(_own, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec(),
                            check_vma=False))


def average_gradients(grads):
    return OWN(grads)
