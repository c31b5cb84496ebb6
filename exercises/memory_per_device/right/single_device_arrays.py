"""Cuts w into column blocks, sends each to its device with jax.device_put, and joins them
with jax.make_array_from_single_device_arrays into one array split over the mesh."""
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import numpy as np

MESH = Mesh(np.array(jax.devices()), ("shard",))


def shard_params(w):
    sharding = NamedSharding(MESH, P(None, "shard"))
    blocks = [jax.device_put(w[index], device)
              for device, index in sharding.addressable_devices_indices_map(w.shape).items()]
    return jax.make_array_from_single_device_arrays(w.shape, sharding, blocks)
