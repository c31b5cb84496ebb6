# expect: limits
"""Moves the placed array with a donating jax.device_put, then reads the array it gave up
(its sum, as a check that nothing was lost): the donated buffers are gone, and under JAX 0.10
reading them crashes the process, graded or run alone."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


def move_to_second_half(x):
    devices = jax.devices()
    first = jax.make_mesh((4,), ("data",), devices=devices[:4])
    second = jax.make_mesh((4,), ("data",), devices=devices[4:])
    placed = jax.device_put(x, NamedSharding(first, P("data")))
    moved = jax.device_put(placed, NamedSharding(second, P("data")), donate=True)
    assert jnp.allclose(jnp.sum(placed), jnp.sum(moved))
    return moved
