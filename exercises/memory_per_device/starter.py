"""Each device holds 1/8 of a parameter, in any layout.

Write shard_params(w), where w is a float32 JAX array of shape (n, m), n and m multiples of 8
(possibly 0). Return w itself, unchanged, placed across the 8 devices so that each device
holds 1/8 of it. Any layout will do: rows or columns split over a mesh of the 8 devices,
blocks of a 2 x 4 mesh, the devices in any order, jax.device_put or a jitted function's
out_shardings. A replicated copy, or a mesh of fewer devices, holds more than 1/8 per device.
The grader reads which part of w each device really holds.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def shard_params(w: jax.Array) -> jax.Array:
    # Your code here: a NamedSharding that splits w 8 ways, applied to w.
    raise NotImplementedError("shard_params is not written yet")
