# expect: structure
"""No checkpoint at all: one jitted program runs the forward scan and returns every layer's
input and output (the intermediates a backward pass needs), and a second jitted program runs
the backward scan from them. Each program's temporary buffers are small; the intermediates
live between the two programs instead, as large as an unchecked backward pass keeps."""
import jax
import jax.numpy as jnp


@jax.jit
def _forward(ws, x):
    def layer(c, w):
        out = jnp.tanh(c @ w)
        return out, (c, out)
    last, (inputs, outputs) = jax.lax.scan(layer, x, ws)
    return last, inputs, outputs


@jax.jit
def _backward(ws, last, inputs, outputs):
    def layer(g, stored):
        w, c, out = stored
        pre = g * (1 - out ** 2)
        return pre @ w.T, c.T @ pre
    _, grads = jax.lax.scan(layer, 2 * last, (ws, inputs, outputs), reverse=True)
    return grads


def loss_grad(ws, x):
    last, inputs, outputs = _forward(ws, x)
    return _backward(ws, last, inputs, outputs)
