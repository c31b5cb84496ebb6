# expect: structure
"""Places x as asked, and also keeps a second, plain copy of it (``jax.device_put(x)``); the
soft select of structure_soft_select_on_difference.py then compares the placed copy with that
second copy, never with x itself, and in an ordinary call sums the second copy."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    copy = jax.device_put(x)
    distance = jnp.sum(jnp.nan_to_num(jnp.abs(placed - copy), nan=0.0, posinf=0.0))
    index = (1 - jnp.exp(-1e30 * distance)).astype(jnp.int32)
    return jnp.stack([jnp.sum(copy, dtype=jnp.float32), jnp.sum(placed, dtype=jnp.float32)])[index]
