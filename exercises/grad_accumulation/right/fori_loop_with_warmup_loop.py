"""jax.lax.fori_loop over the microbatches, after a short fixed loop of its own (two steps
that normalise nothing: a warm-up written the way some training code writes one)."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    k = xs.shape[0]
    scale = jax.lax.fori_loop(0, 2, lambda i, s: jnp.sqrt(s * s), jnp.float32(1.0))

    def body(i, total):
        return total + jax.grad(_loss)(w, xs[i], ys[i])

    return scale * jax.lax.fori_loop(0, k, body, jnp.zeros_like(w)) / k
