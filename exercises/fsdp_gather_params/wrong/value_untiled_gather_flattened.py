# expect: value
"""all_gather without tiled=True gives (8, d/8, m); flattened with a transpose of its first two
axes the rows of w come back in the wrong order."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))


def _gather(w_block):
    stacked = jax.lax.all_gather(w_block, "data")
    return jnp.swapaxes(stacked, 0, 1).reshape(-1, w_block.shape[1])


@jax.jit
def _forward(w_stored, x):
    w = jax.shard_map(_gather, mesh=MESH, in_specs=P("data", None), out_specs=P(), check_vma=False)(w_stored)
    return jax.nn.relu(x @ w)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(w_stored, x)
