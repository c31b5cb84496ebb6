# expect: structure
"""Reshapes the devices into 4 x 2: x's rows are split four ways and w's columns two ways."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return rows @ columns
