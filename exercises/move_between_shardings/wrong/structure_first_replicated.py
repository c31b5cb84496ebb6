# expect: structure
"""Copies all of x onto each of the first four devices (PartitionSpec()) instead of splitting it,
then moves it split to the last four: the final layout is right, the first placement is not."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x):
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec()))
    return jax.device_put(placed, NamedSharding(second, PartitionSpec("data")))
