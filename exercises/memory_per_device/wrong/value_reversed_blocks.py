# expect: value
"""The rows reversed before placing (w[::-1]): each device holds 1/8 of the wrong matrix."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def shard_params(w):
    return jax.device_put(w[::-1], NamedSharding(Mesh(np.array(jax.devices()), ("shard",)), P("shard")))
