"""Moving an array between two shardings.

Write move_to_second_half(x), where x is a one-dimensional float32 array whose length is a
multiple of 4:

1. place x over a mesh of jax.devices()[:4] with the axis name 'data' and PartitionSpec('data');
2. move the placed array with jax.device_put to a mesh of jax.devices()[4:] (in that order),
   axis name 'data', PartitionSpec('data');
3. return the moved array.

The grader runs your function with 8 simulated CPU devices and checks the values, both
placements, and where every shard of the returned array lives (device 4 holds the first
quarter of x, device 5 the second, ...).
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def move_to_second_half(x: jax.Array) -> jax.Array:
    # Your code here: place x on the first four devices, then move the placed array to the last four.
    raise NotImplementedError("move_to_second_half is not written yet")
