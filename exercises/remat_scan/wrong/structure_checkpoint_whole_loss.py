# expect: structure
"""jax.checkpoint around the whole loss, not the body: the forward pass is recomputed once, as a
whole, and its intermediates stored as before."""
import jax
import jax.numpy as jnp


@jax.checkpoint
def loss(ws, x):
    c, _ = jax.lax.scan(lambda c, w: (jnp.tanh(c @ w), None), x, ws)
    return jnp.sum(c ** 2)


@jax.jit
def loss_grad(ws, x):
    return jax.grad(loss)(ws, x)
