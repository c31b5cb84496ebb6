# expect: value
"""Divides by the size of 'model', as if the 4 copies of each row of x each added their own
product: replicated data is not counted once per copy."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return (rows @ columns) / mesh.shape["model"]
