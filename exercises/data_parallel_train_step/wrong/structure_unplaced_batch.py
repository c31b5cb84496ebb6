# expect: structure
"""Places params and batch, then computes the step on the original batch: the split batch is
never used, so the gradient is not computed data-parallel."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def loss(params, batch):
    dense = params["dense"]
    return jnp.mean((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)


@jax.jit
def step(params, batch):
    grads = jax.grad(loss)(params, batch)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def train_step(params, batch):
    params = jax.device_put(params, NamedSharding(MESH, PartitionSpec()))
    jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data")))
    return step(params, batch)
