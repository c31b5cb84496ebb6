# expect: structure
"""fori_loop filling the output one example at a time."""
import jax
import jax.numpy as jnp


def scores(xs, w):
    xs = jnp.asarray(xs)
    out = jnp.zeros(xs.shape[0], jnp.float32)
    if xs.shape[0] == 0:
        return out
    return jax.lax.fori_loop(0, xs.shape[0], lambda i, o: o.at[i].set(jnp.dot(xs[i], w)), out)
