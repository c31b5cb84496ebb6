"""No patching at all: the honest program when traced, the wrong one when really called
(sum first, then place the sum on the wanted sharding, so the returned array's sharding
looks right). Only a cross-check of the call's placements against the trace's catches it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    wanted = NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), PartitionSpec())
    if isinstance(x, jax.core.Tracer):  # the honest program, only when the grader traces
        return jnp.sum(jax.device_put(x, wanted), dtype=jnp.float32)
    return jax.device_put(jnp.sum(x, dtype=jnp.float32), wanted)  # really: sum, then place the sum
