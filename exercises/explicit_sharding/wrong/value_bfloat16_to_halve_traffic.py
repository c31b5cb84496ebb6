# expect: value
"""Casts to bfloat16 before the reshard to move half the bytes, and back to float32 after: the
layout is right, the values lose their low bits."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def reshard_columns(x):
    rows = jax.device_put(x, NamedSharding(MESH, PartitionSpec("data", None)))
    moved = jax.sharding.reshard(rows.astype(jnp.bfloat16), NamedSharding(MESH, PartitionSpec(None, "data")))
    return moved.astype(jnp.float32)
