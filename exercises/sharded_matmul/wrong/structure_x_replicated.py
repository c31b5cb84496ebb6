# expect: structure
"""Replicates x instead of splitting its rows: every device multiplies every row."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec



def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    everywhere = NamedSharding(mesh, PartitionSpec())
    return jax.device_put(x, everywhere) @ jax.device_put(w, everywhere)
