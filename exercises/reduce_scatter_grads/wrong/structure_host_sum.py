# expect: structure
"""Sums on the host with NumPy and places the sum split over the devices."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def reduce_scatter_grads(grads):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    return jax.device_put(np.asarray(grads).sum(axis=0), NamedSharding(mesh, P("data")))
