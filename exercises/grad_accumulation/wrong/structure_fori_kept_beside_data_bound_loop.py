# expect: structure
"""A fori_loop of k empty steps kept alive, beside a while loop whose bound (64) is computed
from the data, so XLA cannot fix its length: the gradients run 64 masked steps whatever k is."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    k = xs.shape[0]
    idle = jax.lax.fori_loop(0, k, lambda i, c: c + 0.0 * xs[i, 0, 0], 0.0)
    bound = 64 + (0.0 * xs.sum()).astype(jnp.int32)

    def body(carry):
        i, total = carry
        j = jnp.minimum(i, k - 1)
        return i + 1, total + jnp.where(i < k, jax.grad(_loss)(w, xs[j], ys[j]), 0.0)

    _, total = jax.lax.while_loop(lambda carry: carry[0] < bound, body, (jnp.int32(0), jnp.zeros_like(w)))
    return total / k + idle
