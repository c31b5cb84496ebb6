# expect: value
"""Returns the loss of the new weights, not of the w given."""
import jax
import jax.numpy as jnp


def make_step():
    def loss_of(w, x, y):
        return jnp.mean((x @ w - y) ** 2)

    @jax.jit
    def step(w, x, y, lr):
        new = w - lr * jax.grad(loss_of)(w, x, y)
        return new, loss_of(new, x, y)

    return step
