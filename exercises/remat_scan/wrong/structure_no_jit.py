# expect: structure
"""Checkpointed, but not jitted: JAX runs the gradient op by op, and no program of the student's
holds it to measure."""
import jax
import jax.numpy as jnp


@jax.checkpoint
def layer(c, w):
    return jnp.tanh(c @ w), None


def loss(ws, x):
    c, _ = jax.lax.scan(layer, x, ws)
    return jnp.sum(c ** 2)


def loss_grad(ws, x):
    return jax.grad(loss)(ws, x)
