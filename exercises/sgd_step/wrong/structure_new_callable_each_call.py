# expect: structure
"""A new step object jitted on every call: compiled on every call."""
import jax


class Step:
    def __call__(self, w, g, lr):
        return w - lr * g


def sgd_step(w, g, lr):
    return jax.jit(Step(), donate_argnums=0)(w, g, lr)
