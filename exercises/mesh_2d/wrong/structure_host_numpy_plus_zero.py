# expect: structure
"""Places the arguments as asked, computes the squares with NumPy on the host from the original
arguments, and adds 0 times the placed array so the result looks computed from the placement."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    return jnp.asarray(np.square(np.asarray(x))) + 0 * placed
