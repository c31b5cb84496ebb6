# expect: structure
"""lr baked in with functools.partial: each partial is a new function to jit."""
from functools import partial

import jax


def _step(w, g, lr):
    return w - lr * g


def sgd_step(w, g, lr):
    return jax.jit(partial(_step, lr=lr), donate_argnums=0)(w, g)
