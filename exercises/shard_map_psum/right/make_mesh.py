"""jax.make_mesh (Explicit axes): shard_map then insists that x already has the layout in_specs
names, so x is placed first; the psum runs on a one-element block sum."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec

EXPLICIT = jax.make_mesh((8,), ("data",))


def _block_sum(block: jax.Array) -> jax.Array:
    return jax.lax.psum(jnp.sum(block, keepdims=True), "data")[0]


SUM = jax.jit(jax.shard_map(_block_sum, mesh=EXPLICIT, in_specs=PartitionSpec("data"), out_specs=PartitionSpec()))


def sharded_sum(x: jax.Array) -> jax.Array:
    return SUM(jax.device_put(x, NamedSharding(EXPLICIT, PartitionSpec("data"))))
