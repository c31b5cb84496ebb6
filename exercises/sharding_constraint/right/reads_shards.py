"""Builds the jitted function per call and reads the result's addressable_shards (how many
devices hold a piece) before returning it."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_energies(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    sharding = NamedSharding(mesh, PartitionSpec("data", None))

    def energies(m):
        y = m * m
        y = jax.lax.with_sharding_constraint(y, sharding)
        return y.sum(axis=-1)

    out = jax.jit(energies)(x)
    assert {shard.device for shard in out.addressable_shards} <= set(jax.devices())
    return out
