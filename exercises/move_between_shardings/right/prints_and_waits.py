"""Prints both shardings and waits for each copy with block_until_ready(): untraceable, judged
from the real call (two device_puts, the second moving the first one's result)."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x):
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    placed.block_until_ready()
    print("before:", placed.sharding)
    moved = jax.device_put(placed, NamedSharding(second, PartitionSpec("data")))
    moved.block_until_ready()
    print("after:", moved.sharding)
    return moved
