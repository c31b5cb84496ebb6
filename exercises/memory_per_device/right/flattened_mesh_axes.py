"""A 2 x 4 mesh with both axes on the rows (PartitionSpec(('a', 'b'), None)): 8 row blocks."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def shard_params(w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("a", "b"))
    return jax.device_put(w, NamedSharding(mesh, P(("a", "b"), None)))
