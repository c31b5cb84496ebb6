"""A data-parallel training step: params replicated, the batch split over 'data'.

Write train_step(params, batch). params is {'dense': {'kernel': W, 'bias': b}} (W float32 of
shape (k, m), b of shape (m,)); batch is {'x': x, 'y': y} (x float32 of shape (n, k), y of
shape (n, m)); n is a multiple of 8. The loss is jnp.mean((x @ W + b - y) ** 2).

1. build a one-dimensional mesh over all devices, jax.devices(), with the axis name 'data';
2. place params replicated: jax.device_put(params, NamedSharding(mesh, PartitionSpec()));
3. place batch split by rows: jax.device_put(batch, NamedSharding(mesh, PartitionSpec('data')));
4. from the placed arrays, compute jax.grad of the loss with respect to params and return the
   new params after one gradient-descent step with learning rate 0.1: p - 0.1 * g for every
   leaf, a dict shaped like params.

The grader runs your function with 8 simulated CPU devices and checks the values, that every
leaf of params is replicated and every leaf of batch split by rows, that the step is computed
from the placed arrays, and that the new params come out replicated.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

LEARNING_RATE = 0.1


def loss(params: dict, batch: dict) -> jax.Array:
    dense = params["dense"]
    return jnp.mean((batch["x"] @ dense["kernel"] + dense["bias"] - batch["y"]) ** 2)


def train_step(params: dict, batch: dict) -> dict:
    # Your code here: build the mesh, place params replicated and batch by rows, take one step.
    raise NotImplementedError("train_step is not written yet")
