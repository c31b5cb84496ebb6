"""Reads addressable_shards to confirm every device of the mesh holds all of x, and waits with
block_until_ready() before returning."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicate_on_mesh(x):
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("data", "model"))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    devices = sorted(shard.device.id for shard in placed.addressable_shards)
    assert devices == [0, 1, 2, 3], devices
    assert all(shard.data.shape == x.shape for shard in placed.addressable_shards)
    result = placed * mesh.size
    return result.block_until_ready()
