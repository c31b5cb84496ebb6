# expect: value
"""Forgets the learning rate."""
from functools import partial

import jax


@partial(jax.jit, donate_argnums=0)
def sgd_step(w, g, lr):
    return w - g
