# expect: structure
"""jax.lax.map: a small program, but the examples run one after another (a scan)."""
import jax
import jax.numpy as jnp


def scores(xs, w):
    return jax.lax.map(lambda x: jnp.dot(x, w), xs)
