"""Data parallelism written out with jax.shard_map, after placing: each device computes the mean
loss on its own rows, jax.lax.pmean averages the losses across 'data' (equal shares of the
batch, so the mean of the means is the mean), and jax.grad of that averaged loss is the
gradient of the whole batch on every device. Every device applies the same update."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))


def batch_loss(params, batch):
    dense = params["dense"]
    local = jnp.mean((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)
    return jax.lax.pmean(local, "data")


@jax.jit
@partial(jax.shard_map, mesh=MESH, in_specs=(P(), P("data")), out_specs=P())
def _step(params, batch):
    grads = jax.grad(batch_loss)(params, batch)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def train_step(params, batch):
    return _step(jax.device_put(params, NamedSharding(MESH, P())),
                 jax.device_put(batch, NamedSharding(MESH, P("data"))))
