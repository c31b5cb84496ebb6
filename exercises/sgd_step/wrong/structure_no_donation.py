# expect: structure
"""Jitted once, but w is not donated: the result gets a new buffer."""
import jax


@jax.jit
def sgd_step(w, g, lr):
    return w - lr * g
