# expect: structure
"""A while loop over xs as it is that always runs 64 steps (enough for any k the author
expected) and masks the steps past k: right values, but 64 gradient steps run whatever k is,
not one per microbatch."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    k = xs.shape[0]

    def body(carry):
        i, total = carry
        j = jnp.minimum(i, k - 1)
        return i + 1, total + jnp.where(i < k, jax.grad(_loss)(w, xs[j], ys[j]), 0.0)

    _, total = jax.lax.while_loop(lambda carry: carry[0] < 64, body, (jnp.int32(0), jnp.zeros_like(w)))
    return total / k
