# expect: structure
"""Places x on the first four devices, then builds the moved array from a NumPy copy of the
ORIGINAL x on the host, plus 0 times the placed copy so it looks computed from the placement."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x):
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(np.array(x) + 0 * placed, NamedSharding(second, PartitionSpec("data")))
