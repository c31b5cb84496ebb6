# expect: structure
"""Takes the step on the unplaced arguments, then replicates the new params: the result lives
where the task says, but nothing was computed data-parallel."""
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
    return jax.device_put(step(params, batch), NamedSharding(MESH, PartitionSpec()))
