"""Rows of a matrix sharded along 'data'.

Write row_sums(x), where x is a float32 matrix whose number of rows is a multiple of 8:

1. build a one-dimensional mesh over all devices, jax.devices(), with the axis name 'data';
2. place x with jax.device_put(x, NamedSharding(mesh, PartitionSpec('data', None)));
3. return the sum of each row of the placed matrix: a float32 vector, one entry per row.

The grader runs your function with 8 simulated CPU devices and checks the values, the mesh,
the spec, that you summed the placed matrix, and that the result stays split along 'data'.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_sums(x: jax.Array) -> jax.Array:
    # Your code here: build the mesh, place x by rows, sum each row of the placed matrix.
    raise NotImplementedError("row_sums is not written yet")
