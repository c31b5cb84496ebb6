# expect: structure
"""Honest at the probe's shape (12 elements); at every other shape it places x on the first
half but moves the ORIGINAL x to the second half."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x):
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    moved = placed if x.shape == (12,) else x
    return jax.device_put(moved, NamedSharding(second, PartitionSpec("data")))
