# expect: structure
"""w stored split by rows and gathered inside the forward, but a full copy of w is also kept
on every device with jnp.array(w, device=...) (a cache of the whole weights beside the
shards): all of w on each device between programs."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))
WHOLE = NamedSharding(MESH, P())
CACHE = {}


@jax.jit
def _forward(w_stored, x):
    return jax.nn.relu(x @ jax.lax.with_sharding_constraint(w_stored, WHOLE))


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    CACHE["w"] = jnp.array(w, device=WHOLE)
    return w_stored, _forward(w_stored, x)
