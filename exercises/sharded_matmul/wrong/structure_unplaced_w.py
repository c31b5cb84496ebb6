# expect: structure
"""Places x and w, then multiplies the original w: the placed w is never used."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec



def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    return rows @ w
