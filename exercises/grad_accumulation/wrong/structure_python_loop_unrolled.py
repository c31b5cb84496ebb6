# expect: structure
"""A Python loop over the microbatches under jax.jit: unrolled while tracing, one copy of the
gradient per microbatch, so the program grows with k."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    total = jnp.zeros_like(w)
    for i in range(xs.shape[0]):
        total = total + jax.grad(_loss)(w, xs[i], ys[i])
    return total / xs.shape[0]
