# expect: value
"""Multiplies in bfloat16 "to go faster" and casts back: the layout is right, but bfloat16
keeps 8 bits of mantissa, so most digits of the product are lost."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return (rows.astype(jnp.bfloat16) @ columns.astype(jnp.bfloat16)).astype(jnp.float32)
