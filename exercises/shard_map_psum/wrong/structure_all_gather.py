# expect: structure
"""Gathers every block onto every device, then sums locally: right number, no psum."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _gather_sum(block: jax.Array) -> jax.Array:
    return jnp.sum(jax.lax.all_gather(block, "data", tiled=True))


SUM = jax.jit(jax.shard_map(_gather_sum, mesh=MESH, in_specs=PartitionSpec("data"), out_specs=PartitionSpec(),
                            check_vma=False))


def sharded_sum(x: jax.Array) -> jax.Array:
    return SUM(x)
