# expect: structure
"""The mesh over jax.devices() in reverse order: stage p is device 7 - p, so the right rows end
up on the wrong devices (device 0 holds the last row of the result)."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()[::-1]), ("stage",))


def _hand_on(block):
    return jax.lax.ppermute(block, "stage", perm=[(i, (i + 1) % 8) for i in range(8)])


SHIFT = jax.jit(jax.shard_map(_hand_on, mesh=MESH, in_specs=PartitionSpec("stage"), out_specs=PartitionSpec("stage")))


def pipeline_shift(x):
    return SHIFT(x)
