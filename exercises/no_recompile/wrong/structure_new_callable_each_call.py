# expect: structure
"""A new step object jitted on every call."""
import jax
import jax.numpy as jnp


class Step:
    def __call__(self, w, x, y, lr):
        loss, grad = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
        return w - lr * grad, loss


def make_step():
    def step(w, x, y, lr):
        return jax.jit(Step())(w, x, y, lr)
    return step
