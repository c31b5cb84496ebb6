# expect: structure
"""Hands x to jax.jit with in_shardings instead of jax.device_put: the right mesh and the right
numbers, but x itself is never placed with jax.device_put as the task asks."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x):
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("data", "model"))
    scale = jax.jit(lambda v: v * mesh.size, in_shardings=NamedSharding(mesh, PartitionSpec()))
    return scale(x)
