# expect: structure
"""Places x as asked, then picks between two sums by an index computed with arithmetic alone: a
weight that is exactly 1 when the placed copy equals x and exactly 0 when it differs anywhere
(exp of -1e30 times the distance), cast to an integer. In an ordinary call the ORIGINAL x is
summed. No boolean is made, so holding decisions cannot see the choice; only the placed copy
moving by less than any other value can tell."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    distance = jnp.sum(jnp.nan_to_num(jnp.abs(placed - x), nan=0.0, posinf=0.0))
    pick = (1 - jnp.exp(-1e30 * distance)).astype(jnp.int32)
    return jnp.stack([jnp.sum(x, dtype=jnp.float32), jnp.sum(placed, dtype=jnp.float32)])[pick]
