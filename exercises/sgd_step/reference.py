"""One SGD step: jitted once with w donated, lr a traced argument."""
from functools import partial

import jax


@partial(jax.jit, donate_argnums=0)
def sgd_step(w: jax.Array, g: jax.Array, lr: float) -> jax.Array:
    return w - lr * g
