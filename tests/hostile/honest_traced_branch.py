"""Control for trace_only_placement_jit.py: a correct solution that asks whether x is a tracer,
but only to decide whether it may print the values; it places and sums the same way traced or
not. Must keep full marks."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    wanted = NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), PartitionSpec())
    total = jnp.sum(jax.device_put(x, wanted), dtype=jnp.float32)
    if not isinstance(x, jax.core.Tracer):
        print("sum:", total)
    return total
