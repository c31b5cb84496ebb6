# expect: structure
"""Names the 2 x 4 grid's axes ('model', 'data'): 'data' now has 4 devices and 'model' 2, so
x's rows are split four ways and w's columns two ways."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("model", "data"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return rows @ columns
