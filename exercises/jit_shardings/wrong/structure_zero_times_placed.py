# expect: structure
"""The jitted function has the asked in_shardings and out_shardings, but sums the ORIGINAL x,
captured from outside, plus 0 times a sum of the sharded input: the result does not depend on
the input jit laid out."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def column_sums(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    summed = jax.jit(lambda m: jnp.sum(x, axis=0) + 0 * jnp.sum(m, axis=0),
                     in_shardings=NamedSharding(mesh, PartitionSpec("data", None)),
                     out_shardings=NamedSharding(mesh, PartitionSpec()))
    return summed(x)
