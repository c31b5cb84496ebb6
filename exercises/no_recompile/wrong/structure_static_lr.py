# expect: structure
"""lr is static: every new learning rate compiles a new program."""
from functools import partial

import jax
import jax.numpy as jnp


def make_step():
    @partial(jax.jit, static_argnames="lr")
    def step(w, x, y, lr):
        loss, grad = jax.value_and_grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)
        return w - lr * grad, loss

    return step
