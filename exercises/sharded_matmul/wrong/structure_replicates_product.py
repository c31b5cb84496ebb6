# expect: structure
"""Places both correctly, then copies the product onto every device (PartitionSpec()) "so
everyone has the answer": the product is no longer split by rows."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    return jax.device_put(rows @ everywhere, NamedSharding(mesh, PartitionSpec()))
