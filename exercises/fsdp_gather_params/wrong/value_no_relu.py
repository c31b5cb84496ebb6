# expect: value
"""The relu left out: x @ w, negative entries and all."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))

WHOLE = NamedSharding(MESH, P())


@jax.jit
def _forward(w_stored, x):
    return x @ jax.lax.with_sharding_constraint(w_stored, WHOLE)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(w_stored, x)
