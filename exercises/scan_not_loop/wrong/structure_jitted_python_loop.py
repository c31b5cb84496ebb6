# expect: structure
"""A Python loop under jax.jit: unrolled while tracing, one copy of the step per element."""
import jax
import jax.numpy as jnp


@jax.jit
def decayed_sum(xs, a):
    h = jnp.float32(0)
    for i in range(xs.shape[0]):
        h = a * h + xs[i]
    return h
