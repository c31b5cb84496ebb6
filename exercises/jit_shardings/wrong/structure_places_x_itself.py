# expect: structure
"""Places x with jax.device_put itself, which the statement forbids ("Do not place x with
jax.device_put yourself: the point is that jit does it"), then calls a jit with the asked-for
in_shardings and out_shardings: the jit's input is the placed copy, not x."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
ROWS = NamedSharding(MESH, PartitionSpec("data", None))
SUM = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=ROWS, out_shardings=NamedSharding(MESH, PartitionSpec()))


def column_sums(x):
    return SUM(jax.device_put(x, ROWS))
