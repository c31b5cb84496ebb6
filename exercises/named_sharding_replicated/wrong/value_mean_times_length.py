# expect: value
"""The mean scaled back up by the length: the same number for every non-empty vector, NaN for
the empty one (0/0 times 0), whose sum is 0."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.mean(placed) * x.shape[0]
