"""Correct, with a sanity check a careful student writes: after placing, it asserts that the
placed copies hold the arguments' values (a comparison, pulled to the host by the assert),
then multiplies the placed arrays."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    assert jnp.array_equal(rows, x) and jnp.array_equal(everywhere, w), "placing changed the values"
    return rows @ everywhere
