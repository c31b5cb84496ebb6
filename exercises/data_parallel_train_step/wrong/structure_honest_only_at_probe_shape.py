# expect: structure
"""Honest at the probe's shapes (16 examples of 16 features); at every other shape it places
params and batch, but takes the step on the ORIGINAL arrays and places the new params."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
LEARNING_RATE = 0.1


def loss(params, batch):
    dense = params["dense"]
    return jnp.mean((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)



@jax.jit
def step(params, batch):
    grads = jax.grad(loss)(params, batch)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def train_step(params, batch):
    placed_params = jax.device_put(params, NamedSharding(MESH, PartitionSpec()))
    placed_batch = jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data")))
    if batch["x"].shape == (16, 16):
        return step(placed_params, placed_batch)
    return jax.device_put(step(params, batch), NamedSharding(MESH, PartitionSpec()))
