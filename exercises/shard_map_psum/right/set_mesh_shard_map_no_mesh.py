"""JAX's current shard_map page: the mesh set with `with jax.set_mesh(mesh):`, x placed with a bare
PartitionSpec, and jax.shard_map given no mesh= (it runs on the mesh in context), jitted."""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",))


@jax.jit
@partial(jax.shard_map, in_specs=P("data"), out_specs=P())
def _total(block):
    return jax.lax.psum(jnp.sum(block), "data")


def sharded_sum(x):
    with jax.set_mesh(mesh):
        x = jax.device_put(x, P("data"))
        return _total(x)
