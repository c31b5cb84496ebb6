# expect: type
"""Forgets the loss: returns only the new weights."""
import jax
import jax.numpy as jnp


def make_step():
    @jax.jit
    def step(w, x, y, lr):
        return w - lr * jax.grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)

    return step
