# expect: structure
"""Pads xs at the front with zeros to a fixed 64 steps (zeros keep h at 0, so the values are right
for any sequence up to 64) and scans over the padding: one scan JAX sees, reading a value computed
from xs, whose program does not grow, but it runs 64 steps whatever the length of xs."""
import jax
import jax.numpy as jnp

PADDED = 64


def decayed_sum(xs, a):
    padded = jnp.concatenate([jnp.zeros(PADDED - xs.shape[0], jnp.float32), xs])
    h, _ = jax.lax.scan(lambda h, x: (jnp.float32(a) * h + x, None), jnp.float32(0), padded)
    return h
