"""The scan jitted and compiled ahead of time once per shape and kept; a travels as a float32 array."""
import jax, jax.numpy as jnp
_c = {}
def _run(xs, a):
    return jax.lax.scan(lambda h, x: (a * h + x, None), jnp.zeros((), xs.dtype), xs)[0]
def decayed_sum(xs, a):
    key = (xs.shape, xs.dtype)
    if key not in _c:
        _c[key] = jax.jit(_run).lower(xs, jnp.float32(a)).compile()
    return _c[key](xs, jnp.float32(a))
