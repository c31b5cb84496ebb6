# expect: structure
"""No shard_map at all: the right number from one plain sum."""
import jax
import jax.numpy as jnp


def sharded_sum(x: jax.Array) -> jax.Array:
    return jnp.sum(x)
