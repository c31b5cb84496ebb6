# expect: structure
"""The right numbers, no sharding at all."""
import jax
import jax.numpy as jnp


def row_max(x: jax.Array) -> jax.Array:
    return jnp.max(x, axis=1)
