"""shard_map as a decorator (functools.partial) under @jax.jit, specs written per dimension
(PartitionSpec('stage', None)), the permutation as a zip of the stage numbers."""
from functools import partial

import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("stage",))
STAGES = list(range(8))


@jax.jit
@partial(jax.shard_map, mesh=MESH, in_specs=P("stage", None), out_specs=P("stage", None))
def pipeline_shift(block):
    return jax.lax.ppermute(block, axis_name="stage", perm=list(zip(STAGES, STAGES[1:] + STAGES[:1])))
