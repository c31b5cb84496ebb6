# expect: load
"""The function wants a second argument the grader never passes."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x, mesh):
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())))
