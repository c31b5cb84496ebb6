# expect: structure
"""Gives jax.jit only in_shardings and replicates the result afterwards with jax.device_put:
the returned array ends up replicated, but the jit never declares out_shardings."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def column_sums(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    summed = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=NamedSharding(mesh, PartitionSpec("data", None)))
    return jax.device_put(summed(x), NamedSharding(mesh, PartitionSpec()))
