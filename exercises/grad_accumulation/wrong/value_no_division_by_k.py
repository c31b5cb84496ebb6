# expect: value
"""Returns the sum of the microbatches' gradients, never divided by k: k times the gradient."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    total, _ = jax.lax.scan(lambda t, xy: (t + jax.grad(_loss)(w, *xy), None), jnp.zeros_like(w), (xs, ys))
    return total
