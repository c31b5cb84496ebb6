"""Written with jax.lax: lax.dot_general contracting x's columns with w's rows."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    return jax.lax.dot_general(rows, everywhere, (((1,), (0,)), ((), ())))
