# expect: structure
"""lr bound with functools.partial, and jitted on every call: a new function per step."""
from functools import partial

import jax
import jax.numpy as jnp


def _step(w, x, y, lr):
    loss, grad = jax.value_and_grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)
    return w - lr * grad, loss


def make_step():
    def step(w, x, y, lr):
        return jax.jit(partial(_step, lr=lr))(w, x, y)

    return step
