# expect: structure
"""Builds the mesh over half the devices: x is split four ways, not eight."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec



def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()[:4]), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    return rows @ jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
