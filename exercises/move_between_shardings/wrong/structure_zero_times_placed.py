# expect: structure
"""Places x on the first four devices as asked, but moves the ORIGINAL x to the last four,
plus 0 times the placed copy: a dataflow link from the first placement exists, but the moved
values do not depend on it."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x):
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("data",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(x + 0 * placed, NamedSharding(second, PartitionSpec("data")))
