# expect: structure
"""Committed to one device: it holds all of w."""
import jax


def shard_params(w):
    return jax.device_put(w, jax.devices()[3])
