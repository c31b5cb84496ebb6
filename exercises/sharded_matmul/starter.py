"""A matmul with its rows sharded: x split over 'data', w replicated.

Write sharded_matmul(x, w), where x is a float32 matrix of shape (n, k) whose number of rows n
is a multiple of 8, and w a float32 matrix of shape (k, m):

1. build a one-dimensional mesh over all devices, jax.devices(), with the axis name 'data';
2. place x with jax.device_put(x, NamedSharding(mesh, PartitionSpec('data', None))): rows split;
3. place w with jax.device_put(w, NamedSharding(mesh, PartitionSpec())): replicated;
4. return the product of the placed arrays, x @ w, a float32 matrix of shape (n, m).

The grader runs your function with 8 simulated CPU devices and checks the values, both
placements, that the product comes from the placed arrays, and that it stays split by rows.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x: jax.Array, w: jax.Array) -> jax.Array:
    # Your code here: build the mesh, place x by rows and w replicated, multiply the placed arrays.
    raise NotImplementedError("sharded_matmul is not written yet")
