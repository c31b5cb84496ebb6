# expect: structure
"""The right numbers without any mesh: what a value-only grader accepts."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x: jax.Array) -> jax.Array:
    return x * 4
