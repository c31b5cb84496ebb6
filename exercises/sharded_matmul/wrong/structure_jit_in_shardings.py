# expect: structure
"""Lets jax.jit lay out both arguments with in_shardings instead of placing them with
jax.device_put: the right product and layout, but neither x nor w is placed as the task asks."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

mesh = Mesh(np.array(jax.devices()), ("data",))
matmul = jax.jit(jnp.matmul, in_shardings=(NamedSharding(mesh, PartitionSpec("data", None)),
                                           NamedSharding(mesh, PartitionSpec())))


def sharded_matmul(x, w):
    return matmul(x, w)
