# expect: structure
"""The right numbers, no sharding at all."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_sums(x: jax.Array) -> jax.Array:
    return jnp.sum(x, axis=1)
