# expect: structure
"""A 2 x 4 mesh, but w split along its first axis only: each device holds 1/2."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def shard_params(w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    return jax.device_put(w, NamedSharding(mesh, P("data", None)))
