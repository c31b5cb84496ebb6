"""The step compiled ahead of time on its first call, for those shapes, and kept."""
import jax
import jax.numpy as jnp


def _step(w, x, y, lr):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    return w - lr * grad, loss


def make_step():
    compiled = {}

    def step(w, x, y, lr):
        key = (w.shape, x.shape)
        if key not in compiled:
            compiled[key] = jax.jit(_step).lower(w, x, y, lr).compile()
        return compiled[key](w, x, y, lr)
    return step
