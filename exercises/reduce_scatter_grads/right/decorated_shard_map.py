"""Correct: shard_map applied as a decorator (functools.partial), jitted, the psum_scatter
untiled then reshaped back to a flat slice."""
from functools import partial

import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
@partial(jax.shard_map, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec("data"))
def reduce_scatter_grads(grads):
    local = grads[0]
    return jax.lax.psum_scatter(local.reshape(8, -1), "data", scatter_dimension=0).reshape(-1)
