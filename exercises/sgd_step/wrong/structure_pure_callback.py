# expect: structure
"""Jitted and donating, but the step itself is computed by NumPy on the host."""
from functools import partial

import jax
import numpy as np


def _host_step(w, g, lr):
    return (np.asarray(w) - np.float32(lr) * np.asarray(g)).astype(np.float32)


@partial(jax.jit, donate_argnums=0)
def sgd_step(w, g, lr):
    return jax.pure_callback(_host_step, jax.ShapeDtypeStruct(w.shape, w.dtype), w, g, lr)
