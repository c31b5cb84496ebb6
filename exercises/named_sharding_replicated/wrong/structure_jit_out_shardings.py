# expect: structure
"""Lets jax.jit put the sum on the one-device mesh with out_shardings instead of placing x:
right number, right-looking result, but x itself is never placed."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    total = jax.jit(jnp.sum, out_shardings=NamedSharding(mesh, PartitionSpec()))
    return total(x)
