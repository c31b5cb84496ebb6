# expect: structure
"""The current docs' style (jax.set_mesh, jax.shard_map without mesh=) with a mesh of the first 4
devices only: the sum is right, but shard_map runs on half of jax.devices()."""
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

half = jax.make_mesh((4,), ("data",), devices=jax.devices()[:4])


def sharded_sum(x):
    with jax.set_mesh(half):
        x = jax.device_put(x, P("data"))
        total = jax.shard_map(lambda block: jax.lax.psum(jnp.sum(block), "data"), in_specs=P("data"),
                              out_specs=P())
        return jax.jit(total)(x)
