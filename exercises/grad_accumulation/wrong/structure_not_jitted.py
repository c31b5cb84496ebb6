# expect: structure
"""The scan run eagerly, the function never jitted: the loop is right, but the statement asks for
one jitted program, whose memory XLA plans as a whole."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def accumulated_grad(w, xs, ys):
    total, _ = jax.lax.scan(lambda t, xy: (t + jax.grad(_loss)(w, *xy), None), jnp.zeros_like(w), (xs, ys))
    return total / xs.shape[0]
