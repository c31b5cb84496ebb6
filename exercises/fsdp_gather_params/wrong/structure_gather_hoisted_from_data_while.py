# expect: structure
"""Wrong: w is gathered by a jax.lax.all_gather written in a while loop whose trip count comes
from the data (w gathered whole in each of two steps, halved and added), inside the jitted
forward. The gather sends the same block every step, so XLA moves it out of the loop and runs it
once here; but as written it runs once per step of a loop no count bounds: not "one all-gather",
nor one copy of w moved."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))


def _gather(block, x):
    trips = 2 + (jnp.sum(x) * 0).astype(jnp.int32)
    start = jnp.zeros((block.shape[0] * 8, block.shape[1]), block.dtype)
    body = lambda s: (s[0] + 1, s[1] + jax.lax.all_gather(block, "data", axis=0, tiled=True) / 2)
    return jax.lax.while_loop(lambda s: s[0] < trips, body, (0, start))[1]


@jax.jit
def _forward(w_stored, x):
    w = jax.shard_map(_gather, mesh=MESH, in_specs=(P("data", None), P()), out_specs=P(), check_vma=False)(w_stored, x)
    return jax.nn.relu(x @ w)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(w_stored, x)
