# expect: structure
"""A fori_loop over xs as it is whose traced bound is a fixed 32 passed into the jitted function,
masking the steps past k: right values, but 32 gradient steps whatever k is."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def _accumulate(w, xs, ys, steps):
    k = xs.shape[0]

    def body(i, total):
        j = jnp.minimum(i, k - 1)
        return total + jnp.where(i < k, jax.grad(_loss)(w, xs[j], ys[j]), 0.0)

    return jax.lax.fori_loop(0, steps, body, jnp.zeros_like(w)) / k


def accumulated_grad(w, xs, ys):
    return _accumulate(w, xs, ys, jnp.int32(32))
