# expect: value
"""Sums the squared errors instead of averaging them: the gradient is n·m times too large
(each device adding up its share is not the same as averaging over the batch)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def loss(params, batch):
    dense = params["dense"]
    return jnp.sum((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)


@jax.jit
def step(params, batch):
    grads = jax.grad(loss)(params, batch)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def train_step(params, batch):
    return step(jax.device_put(params, NamedSharding(MESH, PartitionSpec())),
                jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data"))))
