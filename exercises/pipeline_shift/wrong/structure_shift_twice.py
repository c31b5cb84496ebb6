# expect: structure
"""Two ppermutes, by +2 and then by -1 (7): the rows end up shifted by one, after moving every
row twice."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("stage",))


def _two_hops(block):
    block = jax.lax.ppermute(block, "stage", perm=[(i, (i + 2) % 8) for i in range(8)])
    return jax.lax.ppermute(block, "stage", perm=[(i, (i + 7) % 8) for i in range(8)])


SHIFT = jax.jit(jax.shard_map(_two_hops, mesh=MESH, in_specs=PartitionSpec("stage"), out_specs=PartitionSpec("stage")))


def pipeline_shift(x):
    return SHIFT(x)
