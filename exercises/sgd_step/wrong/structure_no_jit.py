# expect: structure
"""Right values, eagerly: nothing is jitted, nothing donated."""
import jax.numpy as jnp


def sgd_step(w, g, lr):
    return jnp.asarray(w) - lr * jnp.asarray(g)
