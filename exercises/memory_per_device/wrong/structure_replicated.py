# expect: structure
"""Replicated over the 8 devices: every device holds all of w."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def shard_params(w):
    return jax.device_put(w, NamedSharding(Mesh(np.array(jax.devices()), ("shard",)), P()))
