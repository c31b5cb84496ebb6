# expect: structure
"""Builds the 2 x 4 grid as the transpose of a 4 x 2 one: the same devices, shape and names, but
device order [[0, 2, 4, 6], [1, 3, 5, 7]], so every device holds another block than the task
says (device 1 gets the second row block's first column block)."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x):
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2).T, ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    return placed * placed
