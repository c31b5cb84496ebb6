# expect: structure
"""Right numbers, never jitted: every operation dispatched on its own, every call."""
import jax
import jax.numpy as jnp


def make_step():
    def step(w, x, y, lr):
        loss, grad = jax.value_and_grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)
        return w - lr * grad, loss

    return step
