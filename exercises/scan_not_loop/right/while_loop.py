"""jax.lax.while_loop over the indices of xs: one loop JAX sees (a while primitive, not a
scan), its body held once whatever the length."""
import jax
import jax.numpy as jnp


def decayed_sum(xs, a):
    xs = jnp.asarray(xs)
    if xs.shape[0] == 0:  # an empty xs has no element to index: the starting carry itself
        return jnp.float32(0)

    def step(carry):
        i, h = carry
        return i + 1, a * h + xs[i]

    _, final = jax.lax.while_loop(lambda carry: carry[0] < xs.shape[0], step, (jnp.int32(0), jnp.float32(0)))
    return final
