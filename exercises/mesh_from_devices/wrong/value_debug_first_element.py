# expect: value
"""Right placement and scaling, plus a leftover debug print of the first element: an IndexError
on the empty vector, which the statement allows."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x):
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    result = placed * mesh.size
    print("first element:", result[0], "was", placed[0])
    return result
