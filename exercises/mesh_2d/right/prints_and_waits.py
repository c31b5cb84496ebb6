"""Prints the placed matrix's sharding and each block's device, then waits for the squares:
untraceable, judged from the real call."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    print(placed.sharding)
    for shard in placed.addressable_shards:
        print(shard.device, shard.index)
    squares = placed * placed
    squares.block_until_ready()
    return squares
