"""The mesh from jax.sharding.Mesh(np.asarray(jax.devices()).reshape(8)), a helper that places,
and jnp.einsum for the product."""
import jax
import jax.numpy as jnp
import numpy as np


def place(value, mesh, *spec):
    return jax.device_put(value, jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*spec)))


def sharded_matmul(x, w):
    mesh = jax.sharding.Mesh(np.asarray(jax.devices()).reshape(8), ("data",))
    return jnp.einsum("nk,km->nm", place(x, mesh, "data", None), place(w, mesh))
