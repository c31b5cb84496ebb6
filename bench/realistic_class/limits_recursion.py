# expect: limits
"""A recursive sum that halves the vector but never stops at length one."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    if x.shape[0] == 0:
        return jnp.float32(0)
    half = x.shape[0] // 2
    return replicated_sharding_value(x[:half]) + replicated_sharding_value(x[half:])
