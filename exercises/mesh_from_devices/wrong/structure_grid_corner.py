# expect: structure
"""Takes the 2 x 2 corner of the 2 x 4 grid of all devices, thinking it is "the first four":
devices 0, 1, 4 and 5, not jax.devices()[:4]. Right numbers (mesh.size is 4)."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x):
    grid = np.array(jax.devices()).reshape(2, 4)
    mesh = Mesh(grid[:, :2], ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return placed * mesh.size
