"""The placement as functools.partial(jax.device_put, device=...), aliased imports, and the
mesh from a nested list of devices."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh as M
from jax.sharding import NamedSharding as NS
from jax.sharding import PartitionSpec as P

devices = jax.devices()
grid = M(np.array([devices[:4], devices[4:]]), ("data", "model"))
to_blocks = functools.partial(jax.device_put, device=NS(grid, P("data", "model")))


def square_blocks(x):
    blocks = to_blocks(x)
    return jnp.power(blocks, 2)
