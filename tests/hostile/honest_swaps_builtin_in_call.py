"""Control for swap_builtins_in_call.py: a correct solution that, during its own call only,
replaces builtins.print with a logging wrapper (as a student's debugging helper might) and
puts it back before returning. Must keep full marks."""
import builtins

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

REAL_PRINT = builtins.print


def replicated_sharding_value(x):
    builtins.print = lambda *args, **kwargs: REAL_PRINT("[debug]", *args, **kwargs)
    try:
        mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
        placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
        print("placed", placed.shape)
        return jnp.sum(placed, dtype=jnp.float32)
    finally:
        builtins.print = REAL_PRINT
