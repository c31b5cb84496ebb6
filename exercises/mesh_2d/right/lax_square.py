"""Written with jax.lax instead of jax.numpy operators: lax.integer_pow squares the placed
array element by element."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    return jax.lax.integer_pow(placed, 2)
