"""Checks the layouts through addressable_shards (x: n/8 rows per device, w: all of it on each)
before multiplying with jnp.matmul."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    xs = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    ws = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    assert all(s.data.shape == (x.shape[0] // 8, x.shape[1]) for s in xs.addressable_shards)
    assert all(s.data.shape == w.shape for s in ws.addressable_shards)
    return jnp.matmul(xs, ws)
