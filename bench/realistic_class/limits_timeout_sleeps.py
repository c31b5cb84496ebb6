# expect: limits
"""Sleeps 'to let the devices sync' for longer than a call may take."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    import time
    time.sleep(30)
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)
