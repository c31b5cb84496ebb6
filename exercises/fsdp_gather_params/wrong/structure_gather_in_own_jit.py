# expect: structure
"""The gather in a jitted function of its own, called before the jitted forward: the right
numbers, but the whole w is handed from one program to the next on every device (this got full
marks before issue #42)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))

WHOLE = NamedSharding(MESH, P())


@jax.jit
def _gather(w_stored):
    return jax.lax.with_sharding_constraint(w_stored, WHOLE)


@jax.jit
def _forward(w, x):
    return jax.nn.relu(x @ w)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(_gather(w_stored), x)
