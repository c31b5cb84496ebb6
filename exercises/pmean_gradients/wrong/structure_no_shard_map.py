# expect: structure
"""No shard_map at all: the mean over the first axis of every leaf, right numbers on one device."""
import jax
import jax.numpy as jnp


def average_gradients(grads):
    return jax.tree.map(lambda g: jnp.mean(g, axis=0), grads)
