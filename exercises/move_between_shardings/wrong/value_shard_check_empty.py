# expect: value
"""Moves correctly, then checks every shard's position by dividing its start by the block
length: a ZeroDivisionError on the empty vector, which the statement allows (0 is a multiple
of 4)."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x):
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    moved = jax.device_put(placed, NamedSharding(second, PartitionSpec("data")))
    block = len(x) // 4
    for shard in moved.addressable_shards:
        assert (shard.index[0].start or 0) // block == shard.device.id - 4
    return moved
