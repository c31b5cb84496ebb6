# expect: value
"""Starts the carry at 1 instead of 0."""
import jax
import jax.numpy as jnp


def decayed_sum(xs, a):
    final, _ = jax.lax.scan(lambda h, x: (a * h + x, None), jnp.float32(1), xs)
    return final
