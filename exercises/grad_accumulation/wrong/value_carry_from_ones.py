# expect: value
"""Starts the running sum from jnp.ones_like(w) instead of zeros: every entry is off by 1 / k."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    total, _ = jax.lax.scan(lambda t, xy: (t + jax.grad(_loss)(w, *xy), None), jnp.ones_like(w), (xs, ys))
    return total / xs.shape[0]
