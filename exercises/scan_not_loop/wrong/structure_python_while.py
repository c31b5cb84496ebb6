# expect: structure
"""A Python while loop over indices under jax.jit: unrolled like a for loop."""
import jax
import jax.numpy as jnp


@jax.jit
def decayed_sum(xs, a):
    h, i = jnp.float32(0), 0
    while i < xs.shape[0]:
        h = a * h + xs[i]
        i += 1
    return h
