# expect: value
"""The classic shard_map recipe, pmean of each device's gradient, with shard_map's default
check_vma=True: JAX then already sums the gradient of the replicated params across devices
(the transpose of broadcasting them to every device), so the pmean averages eight equal
sums and the step is 8 times too large."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))


def local_loss(params, batch):
    dense = params["dense"]
    return jnp.mean((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)


@jax.jit
@partial(jax.shard_map, mesh=MESH, in_specs=(P(), P("data")), out_specs=P())
def _step(params, batch):
    grads = jax.lax.pmean(jax.grad(local_loss)(params, batch), "data")
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def train_step(params, batch):
    return _step(jax.device_put(params, NamedSharding(MESH, P())),
                 jax.device_put(batch, NamedSharding(MESH, P("data"))))
