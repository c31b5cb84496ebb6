# expect: structure
"""Megatron's row-parallel layout instead: x split as ('data', 'model') and w's rows over
'model'. The product is the same numbers, but each device holds only a partial sum and the
devices must add them up: not the column-parallel layer the task asks for."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    x_blocks = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    w_rows = jax.device_put(w, NamedSharding(mesh, PartitionSpec("model", None)))
    return x_blocks @ w_rows
