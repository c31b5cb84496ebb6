"""jax.make_mesh builds the same grid (with Explicit axis types); the size comes from the mesh shape."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x: jax.Array) -> jax.Array:
    mesh = jax.make_mesh((2, 2), ("data", "model"), devices=jax.devices()[:4])
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return placed * (mesh.shape["data"] * mesh.shape["model"])
