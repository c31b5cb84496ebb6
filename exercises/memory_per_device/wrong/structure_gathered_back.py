# expect: structure
"""Split over the devices, then gathered back onto every one by a jitted copy that replicates it."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("shard",))
GATHER = jax.jit(lambda w: w * 1, out_shardings=NamedSharding(MESH, P()))


def shard_params(w):
    return GATHER(jax.device_put(w, NamedSharding(MESH, P("shard"))))
