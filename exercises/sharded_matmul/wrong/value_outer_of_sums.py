# expect: value
"""Multiplies element by element where the columns line up (a broadcasting slip), not x @ w."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec



def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    return rows[:, :1] * jnp.sum(everywhere, axis=0)
