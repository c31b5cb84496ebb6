"""Honest but enormous: returns 13 arrays of a million float32 each beside the sum (73 MB of
reply, more than the channel's 64 MiB). The child must say the record is too large, which
fails the student's values, rather than send what the grader would refuse as a flood."""
import jax.numpy as jnp


def replicated_sharding_value(x):
    return x.sum(), tuple(jnp.full((1 << 20,), float(i), jnp.float32) for i in range(13))
