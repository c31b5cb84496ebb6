# expect: load
"""Mixed indentation: the return is indented deeper than the line above it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
      return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())))
