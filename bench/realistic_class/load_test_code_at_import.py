# expect: load
"""Leaves a failing self-test at module level: the assert runs (and fails) on import."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)


assert replicated_sharding_value(jnp.arange(4.0)) == 10.0 + 1
