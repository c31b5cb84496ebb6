# expect: structure
"""Places x and w, then multiplies the placed x by the original w: the placed w is never used."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return rows @ w
