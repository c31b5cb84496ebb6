# expect: structure
"""Uses jax.set_mesh with jax.make_mesh's default mesh and places with a bare PartitionSpec():
the mesh covers all 8 devices instead of jax.devices()[:1]."""
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def replicated_sharding_value(x):
    with jax.set_mesh(jax.make_mesh((jax.device_count(),), ("data",))):
        placed = jax.device_put(x, P())
        return jnp.sum(placed)
