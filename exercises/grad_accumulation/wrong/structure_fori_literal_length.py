# expect: structure
"""A fori_loop whose length is the literal 6, the number of microbatches of the input it was tried
on: right there, but the loop does not follow k (with fewer microbatches it reads past the end,
which JAX clamps to the last one; with more it leaves some out). Divided by k, so the values are
right when k is 6."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    total = jax.lax.fori_loop(0, 6, lambda i, t: t + jax.grad(_loss)(w, xs[i], ys[i]), jnp.zeros_like(w))
    return total / xs.shape[0]
