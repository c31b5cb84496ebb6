# expect: structure
"""w stored split by rows and gathered inside the forward, but also copied whole onto every
device by a jitted identity whose out_shardings replicate it, and the copy kept for later
steps: all of w on every device between programs."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))
WHOLE = NamedSharding(MESH, P())
KEPT = {}

_replicate = jax.jit(lambda a: a, out_shardings=WHOLE)


@jax.jit
def _forward(w_stored, x):
    return jax.nn.relu(x @ jax.lax.with_sharding_constraint(w_stored, WHOLE))


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    KEPT["w"] = _replicate(w)
    return w_stored, _forward(w_stored, x)
