# expect: value
"""The permutation in the wrong direction: stage i sends to stage i - 1, which is
jnp.roll(x, -1, axis=0)."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("stage",))


def _hand_back(block):
    return jax.lax.ppermute(block, "stage", perm=[(i, (i - 1) % 8) for i in range(8)])


SHIFT = jax.jit(jax.shard_map(_hand_back, mesh=MESH, in_specs=PartitionSpec("stage"),
                              out_specs=PartitionSpec("stage")))


def pipeline_shift(x):
    return SHIFT(x)
