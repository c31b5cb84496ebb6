# expect: structure
"""Places the arguments as asked, computes x times the mesh's size with NumPy on the host from the
original arguments, and adds 0 times the placed array so the result looks computed from the
placement."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x):
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.asarray(np.asarray(x) * np.float32(4)) + 0 * placed
