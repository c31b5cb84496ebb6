"""Mesh built from a list of lists; the scaling runs in a jitted helper defined once."""
from functools import partial

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


@partial(jax.jit, static_argnums=1)
def scale(values: jax.Array, factor: int) -> jax.Array:
    return values * factor


def replicate_on_mesh(x: jax.Array) -> jax.Array:
    first = jax.devices()[:4]
    mesh = Mesh(np.array([first[:2], first[2:]]), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return scale(placed, mesh.devices.size)
