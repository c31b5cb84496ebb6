"""The step jitted at import; make_step returns it."""
import jax
import jax.numpy as jnp


@jax.jit
def _step(w, x, y, lr):
    grad = jax.grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)
    return w - lr * grad, jnp.mean((x @ w - y) ** 2)


def make_step():
    return _step
