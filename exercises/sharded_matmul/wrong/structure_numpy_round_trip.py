# expect: structure
"""Places x and w as asked, pulls the placed arrays back to NumPy, multiplies them on the host
and places the product by rows: the layout is right, but no device computed it."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    return jax.device_put(np.asarray(rows) @ np.asarray(everywhere), NamedSharding(mesh, PartitionSpec("data", None)))
