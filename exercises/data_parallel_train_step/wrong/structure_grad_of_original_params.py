# expect: structure
"""Places params and batch, but takes the gradient of the ORIGINAL params (on the placed
batch) and applies it to the placed params: the update reads the placement, the gradient
does not."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
LEARNING_RATE = 0.1


def loss(params, batch):
    dense = params["dense"]
    return jnp.mean((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)



def train_step(params, batch):
    placed_params = jax.device_put(params, NamedSharding(MESH, PartitionSpec()))
    placed_batch = jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data")))
    grads = jax.grad(loss)(params, placed_batch)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, placed_params, grads)
