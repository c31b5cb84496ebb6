# expect: structure
"""Places the arguments as asked, computes the product with NumPy on the host from the original
arguments, and adds 0 times the product of the placed arrays so the result looks computed from
the placement."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return jnp.asarray(np.asarray(x) @ np.asarray(w)) + 0 * (rows @ columns)
