"""The rows of w split over a 1-D mesh of the 8 devices."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("shard",))


def shard_params(w: jax.Array) -> jax.Array:
    return jax.device_put(w, NamedSharding(MESH, PartitionSpec("shard", None)))
