# expect: structure
"""Builds the 2 x 4 grid as reshape(4, 2).T: the right shape, names and devices, but in
another order, so the blocks of the product land on the wrong devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2).T, ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return rows @ columns
