# expect: type
"""Returns the NumPy blocks stacked back, not a JAX array."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def shard_params(w):
    placed = jax.device_put(w, NamedSharding(Mesh(np.array(jax.devices()), ("shard",)), P("shard")))
    return np.asarray(placed)
