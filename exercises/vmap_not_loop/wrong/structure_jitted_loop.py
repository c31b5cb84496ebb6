# expect: structure
"""A loop over the examples under jax.jit: unrolled, one dot product per example."""
import jax
import jax.numpy as jnp


@jax.jit
def scores(xs, w):
    out = jnp.zeros(xs.shape[0], jnp.float32)
    for i in range(xs.shape[0]):
        out = out.at[i].set(jnp.dot(xs[i], w))
    return out
