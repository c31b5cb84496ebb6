# expect: structure
"""lr is static: every new learning rate is a new program."""
from functools import partial

import jax


@partial(jax.jit, static_argnums=2, donate_argnums=0)
def sgd_step(w, g, lr):
    return w - lr * g
