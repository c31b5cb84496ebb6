# expect: load
"""Builds the mesh at import time but never imported Mesh: a NameError while loading."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec


MESH = Mesh(np.array(jax.devices()[:1]), ('data',))


def replicated_sharding_value(x):
    return jnp.sum(jax.device_put(x, NamedSharding(MESH, PartitionSpec())))
