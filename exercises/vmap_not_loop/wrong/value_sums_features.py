# expect: value
"""Forgets w: sums each example's features."""
import jax
import jax.numpy as jnp


def scores(xs, w):
    return jax.vmap(lambda x: jnp.dot(x, jnp.ones_like(w)))(xs)
