# expect: structure
"""Names the second mesh's axis 'model' (and splits along it): the same blocks on the same
devices, but the task asks for the axis name 'data' on both meshes."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x):
    first = Mesh(np.array(jax.devices()[:4]), ("data",))
    second = Mesh(np.array(jax.devices()[4:]), ("model",))
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(placed, NamedSharding(second, PartitionSpec("model")))
