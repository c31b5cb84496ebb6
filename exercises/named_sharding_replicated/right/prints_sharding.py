"""Prints where the placed array and the sum live, as students do while debugging: printing
.sharding is fine at run time but cannot be traced, so the grader judges the real call."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    sharding = NamedSharding(mesh, PartitionSpec())
    placed = jax.device_put(x, sharding)
    print("placed on", placed.sharding)
    total = jnp.sum(placed, dtype=jnp.float32)
    print("sum lives on", total.sharding, "value", total)
    return total
