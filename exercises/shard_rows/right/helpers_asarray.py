"""Helper functions; the mesh from jax.sharding.Mesh(np.asarray(...).reshape(...)); the sum as
jnp.einsum."""
import jax
import jax.numpy as jnp
import numpy as np


def data_mesh():
    devices = jax.devices()
    return jax.sharding.Mesh(np.asarray(devices).reshape(len(devices)), ("data",))


def split_rows(x, mesh):
    return jax.device_put(x, jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data", None)))


def row_sums(x):
    placed = split_rows(x, data_mesh())
    return jnp.einsum("rc->r", placed)
