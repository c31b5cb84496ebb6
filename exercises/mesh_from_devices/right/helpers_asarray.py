"""Helper functions, the mesh from np.asarray(...).reshape(...), and the scaling as a
functools.partial of a jitted multiply."""
import functools

import jax
import jax.numpy as jnp
import numpy as np


def build_mesh(count=4, shape=(2, 2), names=("data", "model")):
    return jax.sharding.Mesh(np.asarray(jax.devices()[:count]).reshape(shape), names)


def replicated(mesh):
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())


def replicate_on_mesh(x):
    mesh = build_mesh()
    placed = jax.device_put(x, replicated(mesh))
    times_mesh = functools.partial(jax.jit(jnp.multiply), mesh.size)
    return times_mesh(placed)
