# expect: structure
"""Two gathers: the left and the right columns of w gathered by two all_gathers and put back
together, inside the forward. The right output, with two collectives where one does."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))


def _gather_halves(w_block):
    half = w_block.shape[1] // 2
    left = jax.lax.all_gather(w_block[:, :half], "data", tiled=True)
    right = jax.lax.all_gather(w_block[:, half:], "data", tiled=True)
    return jnp.concatenate([left, right], axis=1)


@jax.jit
def _forward(w_stored, x):
    w = jax.shard_map(_gather_halves, mesh=MESH, in_specs=P("data", None), out_specs=P(), check_vma=False)(w_stored)
    return jax.nn.relu(x @ w)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(w_stored, x)
