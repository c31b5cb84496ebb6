# expect: structure
"""A jitted step with the asked out_shardings whose gradient is computed with NumPy on the host
through jax.pure_callback: the placed arrays go in and the new params come out replicated, but no
device computed the gradient."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
LEARNING_RATE = 0.1


def host_grads(params, batch):
    x, y = np.asarray(batch["x"]), np.asarray(batch["y"])
    kernel, bias = np.asarray(params["dense"]["kernel"]), np.asarray(params["dense"]["bias"])
    residual = x @ kernel + bias - y
    scale = np.float32(2 / residual.size)
    return {"dense": {"kernel": scale * (x.T @ residual), "bias": scale * residual.sum(axis=0)}}


def step(params, batch):
    shapes = jax.tree.map(lambda v: jax.ShapeDtypeStruct(v.shape, v.dtype), params)
    grads = jax.pure_callback(host_grads, shapes, params, batch)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def train_step(params, batch):
    params = jax.device_put(params, NamedSharding(MESH, PartitionSpec()))
    batch = jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data")))
    return jax.jit(step, out_shardings=NamedSharding(MESH, PartitionSpec()))(params, batch)
