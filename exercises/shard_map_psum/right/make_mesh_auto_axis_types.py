"""jax.make_mesh with axis_types=(AxisType.Auto,): shard_map then lays x out itself, so x needs
no placing first; the per-device function is a decorated jax.shard_map."""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))


@jax.jit
@partial(jax.shard_map, mesh=MESH, in_specs=P("data"), out_specs=P())
def sharded_sum(x):
    return jax.lax.psum(jnp.sum(x), "data")
