"""jax.vmap of jnp.dot, jitted and compiled ahead of time once per shape and kept."""
import jax, jax.numpy as jnp
_c = {}
def scores(xs, w):
    key = (xs.shape, w.shape)
    if key not in _c:
        _c[key] = jax.jit(jax.vmap(jnp.dot, in_axes=(0, None))).lower(xs, w).compile()
    return _c[key](xs, w)
