"""Explicit sharding: from rows to columns with jax.sharding.reshard.

Write reshard_columns(x), where x is a float32 JAX array of shape (r, c), both multiples of 8
(either may be 0):

1. make an explicit mesh over all 8 devices:
   jax.make_mesh((8,), ('data',), axis_types=(AxisType.Explicit,));
2. place x itself by rows: jax.device_put(x, NamedSharding(mesh, PartitionSpec('data', None)));
3. move it to columns with jax.sharding.reshard onto NamedSharding(mesh, PartitionSpec(None, 'data'))
   (or the bare PartitionSpec(None, 'data') under `with jax.set_mesh(mesh):`), eagerly or in jax.jit;
4. return the resharded array: jax.typeof(result) reads float32[r,c@data].

The grader runs your function with 8 simulated CPU devices and checks the values, the first
placement (mesh, axis type Explicit, spec), that the move is a reshard of it, what XLA runs (an
all-to-all, nothing gathered, at most 1/8 of x per device), the result's type and its blocks.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec


def reshard_columns(x: jax.Array) -> jax.Array:
    # Your code here: jax.device_put by rows on an Explicit mesh, then jax.sharding.reshard to columns.
    raise NotImplementedError("reshard_columns is not written yet")
