# expect: structure
"""A Python loop over the layers, each checkpointed, under jit: unrolled, and XLA keeps more, not less."""
import jax
import jax.numpy as jnp


@jax.checkpoint
def layer(c, w):
    return jnp.tanh(c @ w)


@jax.jit
def loss_grad(ws, x):
    def loss(ws):
        c = x
        for i in range(ws.shape[0]):
            c = layer(c, ws[i])
        return jnp.sum(c ** 2)
    return jax.grad(loss)(ws)
