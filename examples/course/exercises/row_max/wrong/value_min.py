# expect: value
"""Takes each row's minimum: placed and split as asked, the wrong numbers."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_max(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()), ("data",))
    return jnp.min(jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None))), axis=1)
