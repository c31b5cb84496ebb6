# expect: structure
"""Pads xs to a fixed 40 steps and unrolls a Python loop over all 40 (zeros at the front leave h
at 0, so the answer is right), beside a scan over xs whose result is added times 0: the program
never grows with the input (its size is the padding's), and a scan reads xs on the way to the
result, but the recurrence is the unrolled loop."""
import jax
import jax.numpy as jnp

PADDED = 40


def decayed_sum(xs, a):
    padded = jnp.concatenate([jnp.zeros(PADDED - xs.shape[0], jnp.float32), xs])
    h = jnp.float32(0)
    for i in range(PADDED):
        h = a * h + padded[i]
    placeholder, _ = jax.lax.scan(lambda c, x: (c + x, None), jnp.float32(0), xs)
    return h + 0 * placeholder
