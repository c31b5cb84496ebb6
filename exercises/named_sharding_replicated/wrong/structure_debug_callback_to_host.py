# expect: structure
"""Places x as asked, copies the placed array to the host with jax.debug.callback, sums the
copy with NumPy and adds 0 times the device's sum: the number comes from the host."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    seen = []
    jax.debug.callback(lambda v: seen.append(np.asarray(v)), placed)
    jax.effects_barrier()
    return jnp.float32(np.sum(seen[-1], dtype=np.float32)) + 0 * jnp.sum(placed > 0)
