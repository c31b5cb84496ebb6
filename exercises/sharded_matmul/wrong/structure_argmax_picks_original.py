# expect: structure
"""Places both arguments as asked and computes both products, then picks one by an integer
index: argmax of [distance == 0, distance > 0] is 0 in an ordinary call (the placed copies equal
the arguments), so the product of the ORIGINAL arrays is returned, re-homed onto the rows'
sharding. The decision is an integer, not a boolean kept from the call."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    distance = jnp.sum(jnp.abs(rows - x)) + jnp.sum(jnp.abs(everywhere - w))
    pick = jnp.argmax(jnp.stack([-distance, distance]))
    both = jnp.stack([jax.device_put(x @ w, rows.sharding), rows @ everywhere])
    return both[pick]
