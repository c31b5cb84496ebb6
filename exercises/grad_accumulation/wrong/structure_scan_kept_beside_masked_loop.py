# expect: structure
"""A scan over xs that does nothing but is kept alive (``0.0 *`` its carry), beside a while
loop that always runs 64 steps and masks those past k: a loop of k steps is there for a
reader of trip counts to find, but the gradients run 64 times whatever k is."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    k = xs.shape[0]
    tick, _ = jax.lax.scan(lambda c, x: (c + 0.0 * x.sum(), None), 0.0, xs)

    def body(carry):
        i, total = carry
        j = jnp.minimum(i, k - 1)
        return i + 1, total + jnp.where(i < k, jax.grad(_loss)(w, xs[j], ys[j]), 0.0)

    _, total = jax.lax.while_loop(lambda carry: carry[0] < 64, body, (jnp.int32(0), jnp.zeros_like(w)))
    return total / k + 0.0 * tick
