# expect: structure
"""The gather done eagerly with jax.device_put to the replicated sharding, then the jitted
forward: the whole w sits on every device outside any program."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))

WHOLE = NamedSharding(MESH, P())


@jax.jit
def _forward(w, x):
    return jax.nn.relu(x @ w)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(jax.device_put(w_stored, WHOLE), x)
