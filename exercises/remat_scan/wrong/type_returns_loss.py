# expect: type
"""value_and_grad, returning the loss ([0]) instead of the gradient."""
import jax
import jax.numpy as jnp


@jax.checkpoint
def layer(c, w):
    return jnp.tanh(c @ w), None


def loss(ws, x):
    c, _ = jax.lax.scan(layer, x, ws)
    return jnp.sum(c ** 2)


@jax.jit
def loss_grad(ws, x):
    return jax.value_and_grad(loss)(ws, x)[0]
