"""value_and_grad, keeping the gradient ([1]); the loss is computed and dropped."""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.checkpoint, prevent_cse=True)
def layer(c, w):
    return jnp.tanh(jnp.dot(c, w)), None


def loss(ws, x):
    c, _ = jax.lax.scan(layer, x, ws)
    return (c * c).sum()


@jax.jit
def loss_grad(ws, x):
    return jax.value_and_grad(loss)(ws, x)[1]
