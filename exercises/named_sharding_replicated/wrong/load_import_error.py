# expect: load
"""Top-level code fails while the file is imported."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()[:1]), ('data',), axis_types=('wrong',))


def replicated_sharding_value(x):
    return jnp.sum(jax.device_put(x, NamedSharding(MESH, PartitionSpec())))
