# expect: value
"""Scans the sequence backwards."""
import jax
import jax.numpy as jnp


def decayed_sum(xs, a):
    final, _ = jax.lax.scan(lambda h, x: (a * h + x, None), jnp.float32(0), xs, reverse=True)
    return final
