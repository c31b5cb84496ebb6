# expect: structure
"""Places params and batch as asked, then blends the ORIGINAL batch and the placed one eagerly
with a weight that is exactly 1 in an ordinary call (the two are equal) and 0 whenever the placed
copy holds other values, and steps on the blend in a jitted function: the step is on the original
batch, the placed one reaching it only through a weight of 0."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

LEARNING_RATE = 0.1
MESH = Mesh(np.array(jax.devices()), ("data",))


def loss(params, batch):
    dense = params["dense"]
    return jnp.mean((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)


@jax.jit
def _step(params, batch):
    grads = jax.grad(loss)(params, batch)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def train_step(params, batch):
    params = jax.device_put(params, NamedSharding(MESH, PartitionSpec()))
    placed = jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data")))
    blended = {}
    for key in batch:
        weight = jnp.exp(-1e30 * jnp.sum((placed[key] - batch[key]) ** 2))
        blended[key] = weight * jax.device_put(batch[key], placed[key].sharding) + (1 - weight) * placed[key]
    return _step(params, blended)
