# expect: structure
"""w stored split by rows and gathered inside the forward, but a second, replicated copy of w is
also built with jax.make_array_from_callback (no jax.device_put) to log a checksum of the weights:
every device holds all of w between programs."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))
WHOLE = NamedSharding(MESH, P())
CHECKSUMS = []


@jax.jit
def _forward(w_stored, x):
    return jax.nn.relu(x @ jax.lax.with_sharding_constraint(w_stored, WHOLE))


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    host = np.asarray(w)
    w_whole = jax.make_array_from_callback(host.shape, WHOLE, lambda index: host[index])
    CHECKSUMS.append(jnp.sum(w_whole))
    return w_stored, _forward(w_stored, x)
