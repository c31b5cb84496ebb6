# expect: structure
"""Reduce-scatters, then gathers the slices back onto every device."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def reduce_scatter_grads(grads):
    def per_device(block):
        mine = jax.lax.psum_scatter(block[0], "data", scatter_dimension=0, tiled=True)
        return jax.lax.all_gather(mine, "data", tiled=True)

    return jax.shard_map(per_device, mesh=MESH, in_specs=P("data"), out_specs=P())(grads)
