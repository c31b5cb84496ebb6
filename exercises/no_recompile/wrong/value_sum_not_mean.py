# expect: value
"""A sum of squared errors instead of their mean: a gradient n times too large."""
import jax
import jax.numpy as jnp


def make_step():
    @jax.jit
    def step(w, x, y, lr):
        loss, grad = jax.value_and_grad(lambda v: jnp.sum((x @ v - y) ** 2))(w)
        return w - lr * grad, loss

    return step
