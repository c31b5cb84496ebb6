"""Written with jax.lax instead of jax.numpy: lax.reduce with lax.add over the only axis of the
placed array."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jax.lax.reduce(placed, np.float32(0), jax.lax.add, (0,))
