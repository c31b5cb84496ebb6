# expect: value
"""Climbs the loss: w + lr * grad."""
import jax
import jax.numpy as jnp


def make_step():
    @jax.jit
    def step(w, x, y, lr):
        loss, grad = jax.value_and_grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)
        return w + lr * grad, loss

    return step
