# expect: structure
"""Places the kernel but forgets the bias: one leaf of params stays on the default device."""
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
    everywhere = NamedSharding(MESH, PartitionSpec())
    kernel = jax.device_put(params["dense"]["kernel"], everywhere)
    params = {"dense": {"kernel": kernel, "bias": params["dense"]["bias"]}}
    return step(params, jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data"))))
