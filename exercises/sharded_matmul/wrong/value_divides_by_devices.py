# expect: value
"""Divides by the device count, as if every replica of w added its own copy of the product."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec



def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    return (rows @ everywhere) / len(jax.devices())
