"""in_specs=PartitionSpec('data', None), scattering axis 1 of the (1, n) block, then flattened."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def reduce_scatter_grads(grads):
    def per_device(block):
        return jax.lax.psum_scatter(block, "data", scatter_dimension=1, tiled=True)[0]

    return jax.shard_map(per_device, mesh=MESH, in_specs=P("data", None), out_specs=P("data"))(grads)
