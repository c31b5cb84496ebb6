# expect: value
"""Scales w while placing it (a jitted w / 8 with out_shardings): each device holds 1/8, of the wrong numbers."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

SPLIT = jax.jit(lambda w: w / 8, out_shardings=NamedSharding(Mesh(np.array(jax.devices()), ("shard",)), P("shard")))


def shard_params(w):
    return SPLIT(w)
