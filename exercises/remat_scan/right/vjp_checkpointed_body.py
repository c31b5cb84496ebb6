"""The gradient by jax.vjp rather than jax.grad, the scan body checkpointed by a lambda written
inline, the whole function compiled ahead of time on first use and kept per shape."""
import jax
import jax.numpy as jnp

_compiled = {}


def _loss(ws, x):
    last, _ = jax.lax.scan(jax.checkpoint(lambda c, w: (jnp.tanh(c @ w), None)), x, ws)
    return jnp.sum(last * last)


def _gradient(ws, x):
    _, pullback = jax.vjp(_loss, ws, x)
    return pullback(jnp.ones((), ws.dtype))[0]


def loss_grad(ws, x):
    key = (ws.shape, x.shape)
    if key not in _compiled:
        _compiled[key] = jax.jit(_gradient).lower(ws, x).compile()
    return _compiled[key](ws, x)
