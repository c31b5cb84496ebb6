"""Correct, with a sanity check: after placing, it asserts every placed leaf holds the values it
was given, then steps on the placed arrays."""
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
    placed_params = jax.device_put(params, NamedSharding(MESH, PartitionSpec()))
    placed_batch = jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data")))
    for given, placed in ((params, placed_params), (batch, placed_batch)):
        for a, b in zip(jax.tree.leaves(given), jax.tree.leaves(placed)):
            assert jnp.array_equal(a, b), "placing changed the values"
    return _step(placed_params, placed_batch)
