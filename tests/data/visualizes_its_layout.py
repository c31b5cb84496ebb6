"""A right solution of named_sharding_replicated that looks at its layout the way the statements
suggest: jax.debug.visualize_array_sharding, which imports rich only when called, so rich must
be importable in the child from where the grader found it, and never from beside this file."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x: jax.Array) -> jax.Array:
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    if placed.ndim == 1 and placed.size:
        jax.debug.visualize_array_sharding(placed)
    return jnp.sum(placed, dtype=jnp.float32)
