"""Waits for the placement and for the sum with block_until_ready(), as timing code does."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec())).block_until_ready()
    total = placed.sum()
    total.block_until_ready()
    return total
