# expect: load
"""The factory wants the learning rate: make_step() cannot be called with no arguments."""
import jax
import jax.numpy as jnp


def make_step(lr):
    @jax.jit
    def step(w, x, y):
        loss, grad = jax.value_and_grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)
        return w - lr * grad, loss

    return step
