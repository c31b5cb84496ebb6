# expect: structure
"""Honest at the probe's shape (16 x 3); at every other shape the jitted function sums the
ORIGINAL x captured from outside instead of its sharded input."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def column_sums(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    honest = x.shape == (16, 3)
    summed = jax.jit(lambda m: jnp.sum(m if honest else x, axis=0),
                     in_shardings=NamedSharding(mesh, PartitionSpec("data", None)),
                     out_shardings=NamedSharding(mesh, PartitionSpec()))
    return summed(x)
