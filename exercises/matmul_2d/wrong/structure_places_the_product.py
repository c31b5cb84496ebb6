# expect: structure
"""Multiplies the original x and w, then places the product as ('data', 'model'): the right
numbers and the right layout of the result, but neither operand is ever split."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    return jax.device_put(x @ w, NamedSharding(mesh, PartitionSpec("data", "model")))
