# expect: structure
"""Places the arguments as asked, then computes the product with JAX from the ORIGINAL arguments
and adds 0 times the product of the placed arrays: a dataflow link from the placed value exists,
but the result does not depend on it."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    return x @ w + 0 * (rows @ everywhere)
