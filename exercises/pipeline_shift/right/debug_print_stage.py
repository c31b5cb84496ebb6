"""Each stage logs what it hands on with jax.debug.print (the stage index from
jax.lax.axis_index) before the ppermute; the log feeds nothing."""
from functools import partial

import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("stage",))
RING = [(i, (i + 1) % 8) for i in range(8)]


@jax.jit
@partial(jax.shard_map, mesh=MESH, in_specs=P("stage"), out_specs=P("stage"))
def _shift(block):
    jax.debug.print("stage {i} sends a block of shape {s}", i=jax.lax.axis_index("stage"), s=block.shape)
    return jax.lax.ppermute(block, "stage", perm=RING)


def pipeline_shift(x):
    return _shift(x)
