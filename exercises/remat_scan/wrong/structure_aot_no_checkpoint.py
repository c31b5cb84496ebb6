# expect: structure
"""No checkpoint, the gradient compiled ahead of time and kept per shape: the executable stores
every layer's intermediates for the backward pass, whichever route compiled it."""
import jax
import jax.numpy as jnp

_compiled = {}


def _loss(ws, x):
    last, _ = jax.lax.scan(lambda c, w: (jnp.tanh(c @ w), None), x, ws)
    return jnp.sum(last ** 2)


def loss_grad(ws, x):
    key = (ws.shape, x.shape)
    if key not in _compiled:
        _compiled[key] = jax.jit(jax.grad(_loss)).lower(ws, x).compile()
    return _compiled[key](ws, x)
