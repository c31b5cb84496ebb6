# expect: value
"""Multiplies the new element by a instead of the carry."""
import jax
import jax.numpy as jnp


def decayed_sum(xs, a):
    final, _ = jax.lax.scan(lambda h, x: (h + a * x, None), jnp.float32(0), xs)
    return final
