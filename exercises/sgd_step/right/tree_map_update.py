"""The update written the way an optimiser library writes it: tree_map over the parameters."""
from functools import partial

import jax


@partial(jax.jit, donate_argnums=0)
def _apply(params, grads, lr):
    return jax.tree_util.tree_map(lambda p, d: p - lr * d, params, grads)


def sgd_step(w, g, lr):
    return _apply(w, g, lr)
