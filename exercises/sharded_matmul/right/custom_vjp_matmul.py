"""The product through a matmul with its own derivative rule (jax.custom_vjp), as a layer
library would write one: the forward pass is x @ w, the backward pass the exact cotangents.
The task asks for no gradient, so only the primal runs."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


@jax.custom_vjp
def matmul(a, b):
    return a @ b


def _forward(a, b):
    return a @ b, (a, b)


def _backward(saved, g):
    a, b = saved
    return g @ b.T, a.T @ g


matmul.defvjp(_forward, _backward)


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, P("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, P()))
    return matmul(rows, everywhere)
