"""Reads the placed array with NumPy, so JAX cannot trace it: judged from the real call."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    assert np.asarray(placed).shape == x.shape
    return jnp.sum(placed)
