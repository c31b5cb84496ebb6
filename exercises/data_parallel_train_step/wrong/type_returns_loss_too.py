# expect: type
"""Returns (new_params, loss), as many training loops do: the task asks for the new params only."""
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


@jax.jit
def step_with_loss(params, batch):
    value, grads = jax.value_and_grad(loss)(params, batch)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value


def train_step(params, batch):
    return step_with_loss(jax.device_put(params, NamedSharding(MESH, PartitionSpec())),
                          jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data"))))
