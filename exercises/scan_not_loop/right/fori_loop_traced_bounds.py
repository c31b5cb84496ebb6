"""jax.lax.fori_loop whose upper bound is a traced value (the length, passed into a jitted
function as an argument): JAX cannot unroll it into a scan and runs it as a while loop."""
import jax
import jax.numpy as jnp


@jax.jit
def _recurrence(xs, a, length):
    return jax.lax.fori_loop(0, length, lambda i, h: a * h + xs[i], jnp.float32(0))


def decayed_sum(xs, a):
    xs = jnp.asarray(xs)
    if xs.shape[0] == 0:  # an empty xs has no element to index: the starting carry itself
        return jnp.float32(0)
    return _recurrence(xs, a, jnp.int32(xs.shape[0]))
