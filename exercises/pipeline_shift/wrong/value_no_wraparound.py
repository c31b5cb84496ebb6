# expect: value
"""A pipeline without the wrap-around: perm=[(i, i + 1) for i in range(7)], so stage 7's row goes
nowhere and stage 0 receives nothing (ppermute gives it zeros)."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("stage",))


def _hand_on(block):
    return jax.lax.ppermute(block, "stage", perm=[(i, i + 1) for i in range(7)])


SHIFT = jax.jit(jax.shard_map(_hand_on, mesh=MESH, in_specs=PartitionSpec("stage"), out_specs=PartitionSpec("stage")))


def pipeline_shift(x):
    return SHIFT(x)
