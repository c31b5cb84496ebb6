"""The score of one example, vmapped over the batch."""
import jax
import jax.numpy as jnp


def _score(x: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.dot(x, w)


def scores(xs: jax.Array, w: jax.Array) -> jax.Array:
    return jax.vmap(_score, in_axes=(0, None))(xs, w)
