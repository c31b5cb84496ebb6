# expect: value
"""Forgets the square: the gradient of sum(c_L)."""
import jax
import jax.numpy as jnp


@jax.checkpoint
def layer(c, w):
    return jnp.tanh(c @ w), None


@jax.jit
def loss_grad(ws, x):
    return jax.grad(lambda ws: jnp.sum(jax.lax.scan(layer, x, ws)[0]))(ws)
