# expect: structure
"""Names the mesh axis batch: the layout is right, the axis the task names is not there."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec



def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("batch",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("batch", None)))
    return rows @ jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
