"""Compiled ahead of time once per shape, kept."""
import jax

_compiled = {}


def _update(w, g, lr):
    return w - lr * g


def sgd_step(w, g, lr):
    key = (w.shape, w.dtype)
    if key not in _compiled:
        _compiled[key] = jax.jit(_update, donate_argnums=0).lower(w, g, lr).compile()
    return _compiled[key](w, g, lr)
