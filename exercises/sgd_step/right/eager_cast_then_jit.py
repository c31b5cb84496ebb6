"""The arguments made float32 JAX arrays eagerly (a copy-free jnp.asarray, a cast of lr) before
the jitted step, which donates w and does all the arithmetic."""
import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, donate_argnames="w")
def _step(w, g, lr):
    return w - lr * g


def sgd_step(w, g, lr):
    return _step(w, jnp.asarray(g, jnp.float32), jnp.float32(lr))
