"""Sends every leaf of params and batch through one small jitted helper (a float32 cast) after
placing them: leaves of equal shape and layout make its later calls exact repeats, served from
JAX's dispatch cache. The gradient is taken by a jitted step; the update is eager."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
LEARNING_RATE = 0.1
as_float32 = jax.jit(lambda v: v.astype(jnp.float32))


def loss(params, batch):
    dense = params["dense"]
    return jnp.mean((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)


gradients = jax.jit(jax.grad(loss))


def train_step(params, batch):
    params = jax.tree.map(as_float32, jax.device_put(params, NamedSharding(MESH, PartitionSpec())))
    batch = jax.tree.map(as_float32, jax.device_put(batch, NamedSharding(MESH, PartitionSpec("data"))))
    grads = gradients(params, batch)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
