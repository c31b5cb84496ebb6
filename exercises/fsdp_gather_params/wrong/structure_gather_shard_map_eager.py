# expect: structure
"""The right tiled all_gather in a shard_map, but called eagerly before the jitted forward:
the gathered w is handed to the forward whole, on every device."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))
GATHER = jax.shard_map(lambda w_block: jax.lax.all_gather(w_block, "data", tiled=True), mesh=MESH,
                       in_specs=P("data", None), out_specs=P(), check_vma=False)


@jax.jit
def _forward(w, x):
    return jax.nn.relu(x @ w)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(GATHER(w_stored), x)
