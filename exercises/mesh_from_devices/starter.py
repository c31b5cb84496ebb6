"""A mesh from the first devices.

Write replicate_on_mesh(x), where x is a one-dimensional float32 JAX array:

1. build a mesh from the first four devices, jax.devices()[:4], as a 2 x 2 grid with axis
   names ('data', 'model');
2. place x on it replicated: jax.device_put(x, NamedSharding(mesh, PartitionSpec()));
3. return the placed array multiplied by the number of devices in the mesh (mesh.size).

The grader runs your function with 8 simulated CPU devices and checks the values, the mesh
(devices, shape, axis names), the spec, and where the returned array lives.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x: jax.Array) -> jax.Array:
    # Your code here: build the 2 x 2 mesh, place x replicated, scale by the mesh size.
    raise NotImplementedError("replicate_on_mesh is not written yet")
