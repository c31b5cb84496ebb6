"""jax.make_mesh builds the same 2 x 4 grid (Explicit axes); jnp.square squares."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x: jax.Array) -> jax.Array:
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", "model")))
    return jnp.square(placed)
