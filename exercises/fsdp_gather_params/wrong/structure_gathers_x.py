# expect: structure
"""x constrained to PartitionSpec() instead of w: the matmul reads the split w_stored as it is,
and XLA combines it by itself (partial products summed)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))

WHOLE = NamedSharding(MESH, P())


@jax.jit
def _forward(w_stored, x):
    return jax.nn.relu(jax.lax.with_sharding_constraint(x, WHOLE) @ w_stored)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(w_stored, x)
