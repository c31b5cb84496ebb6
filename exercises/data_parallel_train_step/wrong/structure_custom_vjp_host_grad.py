# expect: structure
"""A custom_vjp loss whose backward rule ignores the placed arrays and returns a gradient
computed with NumPy on the host from the ORIGINAL arguments: jax.grad runs on the placed
params and batch, but the update never used them."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
LEARNING_RATE = 0.1


def loss(params, batch):
    dense = params["dense"]
    return jnp.mean((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)



def host_grads(params, batch):
    x, y = np.asarray(batch["x"]), np.asarray(batch["y"])
    kernel, bias = np.asarray(params["dense"]["kernel"]), np.asarray(params["dense"]["bias"])
    residual = x @ kernel + bias - y
    scale = np.float32(2 / residual.size)
    return {"dense": {"kernel": scale * (x.T @ residual), "bias": scale * residual.sum(axis=0)}}


def train_step(params, batch):
    on_host = host_grads(params, batch)

    @jax.custom_vjp
    def model_loss(params, batch):
        return loss(params, batch)

    def forward(params, batch):
        return loss(params, batch), batch

    def backward(batch, cotangent):
        return jax.tree.map(lambda h: cotangent * jnp.asarray(h), on_host), jax.tree.map(jnp.zeros_like, batch)

    model_loss.defvjp(forward, backward)
    params = jax.device_put(params, NamedSharding(MESH, PartitionSpec()))
    batch = jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data")))
    grads = jax.grad(model_loss)(params, batch)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
