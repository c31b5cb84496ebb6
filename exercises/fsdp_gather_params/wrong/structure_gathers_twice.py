# expect: structure
"""w gathered, then gathered again "to be sure" (an all_gather of the gathered w, keeping the
first copy): the right output, with w moved eight times over."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))


def _gather(w_block):
    w = jax.lax.all_gather(w_block, "data", tiled=True)
    return jax.lax.all_gather(w, "data")[0]


@jax.jit
def _forward(w_stored, x):
    w = jax.shard_map(_gather, mesh=MESH, in_specs=P("data", None), out_specs=P(), check_vma=False)(w_stored)
    return jax.nn.relu(x @ w)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(w_stored, x)
