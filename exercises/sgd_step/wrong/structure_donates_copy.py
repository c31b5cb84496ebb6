# expect: structure
"""Donates a copy of w: the copy's buffer is reused, w's never is."""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, donate_argnums=0)
def _step(w, g, lr):
    return w - lr * g


def sgd_step(w, g, lr):
    return _step(jnp.copy(w), g, lr)
