# expect: structure
"""Places x only while being traced: the real call skips the placement."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    if isinstance(x, jax.core.Tracer):
        mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
        return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())))
    return jnp.sum(x)
