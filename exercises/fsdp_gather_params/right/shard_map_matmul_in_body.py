"""A shard_map that gathers w with a tiled all_gather and multiplies in the same body (x handed
whole to every device), jitted at the call site; prints the shardings and waits."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))


def _layer(w_block, x):
    w = jax.lax.all_gather(w_block, "data", tiled=True)
    return jnp.maximum(jnp.dot(x, w), 0.0)


FORWARD = jax.jit(jax.shard_map(_layer, mesh=MESH, in_specs=(P("data", None), P()), out_specs=P(), check_vma=False))


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    print("stored:", w_stored.sharding.spec)
    out = FORWARD(w_stored, x).block_until_ready()
    print("output:", out.sharding)
    return w_stored, out
