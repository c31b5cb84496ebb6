# expect: structure
"""Places the arguments as asked, then computes x times the mesh's size with JAX from the ORIGINAL
arguments and adds 0 times the placed array: a dataflow link from the placed value exists, but
the result does not depend on it."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x):
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return x * 4 + 0 * placed
