# expect: structure
"""The closed form with whole-array operations: right, and no scan at all."""
import jax.numpy as jnp


def decayed_sum(xs, a):
    xs = jnp.asarray(xs)
    powers = jnp.float32(a) ** jnp.arange(xs.shape[0] - 1, -1, -1, dtype=jnp.float32)
    return jnp.sum(powers * xs)
