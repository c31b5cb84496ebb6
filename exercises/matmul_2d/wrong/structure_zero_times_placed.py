# expect: structure
"""Places the arguments as asked, then computes the product with JAX from the ORIGINAL arguments
and adds 0 times the product of the placed arrays: a dataflow link from the placed value exists,
but the result does not depend on it."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return x @ w + 0 * (rows @ columns)
