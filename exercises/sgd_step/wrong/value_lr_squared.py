# expect: value
"""Scales the gradient by lr twice."""
from functools import partial

import jax


@partial(jax.jit, donate_argnums=0)
def sgd_step(w, g, lr):
    return w - lr * (lr * g)
