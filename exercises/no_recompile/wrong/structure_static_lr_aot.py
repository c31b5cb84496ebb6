# expect: structure
"""lr static: the program for each learning rate is compiled ahead of time, then called."""
import functools
import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnums=3)
def _step(w, x, y, lr):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    return w - lr * grad, loss


def make_step():
    def step(w, x, y, lr):
        _step.lower(w, x, y, lr).compile()
        return _step(w, x, y, lr)
    return step
