"""Gradients reduce-scattered: each device keeps the sum of its slice.

Write reduce_scatter_grads(grads), where grads is a float32 JAX array of shape (8, n), n a
positive multiple of 8: row d is the gradient device d computed. Return the sum of the rows,
shape (n,), left split over the devices: with jax.shard_map over a mesh of all 8 devices with
axis 'data' (in_specs=PartitionSpec('data'), out_specs=PartitionSpec('data')), each device sums
its 1/8 slice of every gradient with one jax.lax.psum_scatter. No psum followed by a slice,
no all_gather: they move the whole gradient to every device.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def reduce_scatter_grads(grads: jax.Array) -> jax.Array:
    # Your code here: shard_map over 'data', one psum_scatter per device.
    raise NotImplementedError("reduce_scatter_grads is not written yet")
