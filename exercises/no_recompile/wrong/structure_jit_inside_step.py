# expect: structure
"""The step defines and jits its work on every call: a new function each time."""
import jax
import jax.numpy as jnp


def make_step():
    def step(w, x, y, lr):
        @jax.jit
        def work(w, x, y, lr):
            loss, grad = jax.value_and_grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)
            return w - lr * grad, loss

        return work(w, x, y, lr)

    return step
