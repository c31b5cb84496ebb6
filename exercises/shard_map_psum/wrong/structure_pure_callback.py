# expect: structure
"""Inside shard_map, each device's partial sum goes to the host through jax.pure_callback, then
is psummed: the collective is there, but every block was summed by NumPy on the host."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def block_sum_on_host(block):
    return np.sum(np.asarray(block), dtype=np.float32)


def sharded_sum(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))

    def per_device(block):
        partial = jax.pure_callback(block_sum_on_host, jax.ShapeDtypeStruct((), jnp.float32), block)
        return jax.lax.psum(partial, "data")

    return jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=PartitionSpec("data"), out_specs=PartitionSpec()))(x)
