"""The whole function decorated with @jax.jit, the shard_map applied inside it, and the mesh
from jax.make_mesh with axis_types=(AxisType.Auto,)."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))


@jax.jit
def sharded_sum(x):
    def local(block):
        return jax.lax.psum(jnp.sum(block), "data")

    return jax.shard_map(local, mesh=mesh, in_specs=P("data"), out_specs=P())(x)
