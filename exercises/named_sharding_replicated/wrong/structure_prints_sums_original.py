# expect: structure
"""Places x and prints the placement (so it cannot be traced), then sums the original x by
mistake: the placed copy is never used."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    print("placed:", placed.sharding)
    return jnp.sum(x)
