"""NamedSharding (replicated).

Write replicated_sharding_value(x), where x is a one-dimensional float32 JAX array:

1. build a mesh from jax.devices()[:1] with the single axis name 'data';
2. build NamedSharding(mesh, PartitionSpec());
3. place x with jax.device_put(x, sharding);
4. return the sum of the *placed* array as a float32 scalar JAX array (shape ()).

The grader runs your function with 8 simulated CPU devices and checks both the value and
how you computed it (mesh devices, axis name, spec, and that you summed the placed array).
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x: jax.Array) -> jax.Array:
    # Your code here: build the mesh and the sharding, place x, and sum the placed array.
    raise NotImplementedError("replicated_sharding_value is not written yet")
