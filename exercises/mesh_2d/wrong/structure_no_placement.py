# expect: structure
"""Squares without placing anything."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def square_blocks(x: jax.Array) -> jax.Array:
    return x * x
