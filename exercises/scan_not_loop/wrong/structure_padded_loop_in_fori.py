# expect: structure
"""Pads xs to a fixed 36 steps and unrolls a Python loop over them inside a jitted helper, then
adds 0 times a jax.lax.fori_loop over the padded xs (a scan underneath): a fixed-size program that
reads xs in a loop primitive, while the recurrence is the unrolled copy."""
import jax
import jax.numpy as jnp

PADDED = 36


@jax.jit
def _unrolled(padded, a):
    h = jnp.float32(0)
    for i in range(PADDED):
        h = a * h + padded[i]
    return h


def decayed_sum(xs, a):
    padded = jnp.concatenate([jnp.zeros(PADDED - xs.shape[0], jnp.float32), xs])
    touched = jax.lax.fori_loop(0, PADDED, lambda i, c: c + padded[i], jnp.float32(0))
    return _unrolled(padded, jnp.float32(a)) + 0 * touched
