# expect: structure
"""Pads xs at the front with zeros to a fixed 64 steps (zeros keep h at 0, so the values are right
for any sequence up to 64) and runs a fori_loop with the traced bound 64 over the padding (a while
loop): one loop JAX sees, reading a value computed from xs, but it runs the padding's count of
steps, not one per element of xs."""
import jax
import jax.numpy as jnp

PADDED = 64


@jax.jit
def _run(padded, a, n):
    return jax.lax.fori_loop(0, n, lambda i, h: a * h + padded[i], jnp.float32(0))


def decayed_sum(xs, a):
    padded = jnp.concatenate([jnp.zeros(PADDED - xs.shape[0], jnp.float32), xs])
    return _run(padded, jnp.float32(a), jnp.int32(PADDED))
