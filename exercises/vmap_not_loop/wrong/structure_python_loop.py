# expect: structure
"""A list comprehension over the examples, stacked."""
import jax.numpy as jnp


def scores(xs, w):
    return jnp.stack([jnp.dot(x, w) for x in xs]) if len(xs) else jnp.zeros(0, jnp.float32)
