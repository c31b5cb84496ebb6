"""A 2 x 4 mesh, w split along both of its axes: each device holds one (n/2) x (m/4) block."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def shard_params(w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    placed = jax.device_put(w, NamedSharding(mesh, P("data", "model")))
    print(placed.sharding)
    return placed.block_until_ready()
