# expect: structure
"""w pulled to NumPy, then placed: right layout, but the bytes went through the host."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def shard_params(w):
    mesh = Mesh(np.array(jax.devices()), ("d",))
    return jax.device_put(np.asarray(w), NamedSharding(mesh, P("d")))
