"""The function has another name than the task asks for."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sum(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())))
