# expect: structure
"""A Python loop, eagerly: one dispatched operation per element."""
import jax.numpy as jnp


def decayed_sum(xs, a):
    h = jnp.float32(0)
    for x in xs:
        h = a * h + x
    return h
