"""Reference solution for sharded_matmul."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x: jax.Array, w: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    return rows @ everywhere
