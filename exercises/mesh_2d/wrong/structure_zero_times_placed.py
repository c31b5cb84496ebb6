# expect: structure
"""Places the arguments as asked, then computes the squares with JAX from the ORIGINAL arguments
and adds 0 times the placed array: a dataflow link from the placed value exists, but the result
does not depend on it."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    return x * x + 0 * placed
