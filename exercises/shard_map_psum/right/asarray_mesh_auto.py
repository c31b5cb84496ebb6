"""The mesh from jax.sharding.Mesh(np.asarray(...).reshape(...)) with axis_types=(AxisType.Auto,),
fully qualified names, and a tuple in_specs."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType

MESH = jax.sharding.Mesh(np.asarray(jax.devices()).reshape(8), ("data",), axis_types=(AxisType.Auto,))


def _psum_of_blocks(block):
    return jax.lax.psum(jnp.sum(block, dtype=jnp.float32), "data")


def sharded_sum(x):
    f = jax.shard_map(_psum_of_blocks, mesh=MESH, in_specs=(jax.sharding.PartitionSpec("data"),),
                      out_specs=jax.sharding.PartitionSpec())
    return jax.jit(f)(x)
