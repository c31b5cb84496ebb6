"""Imports device_put and PartitionSpec under other names."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import device_put as put
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), axis_names=('data',))
    return jnp.sum(put(x, NamedSharding(mesh, P())), dtype=jnp.float32)
