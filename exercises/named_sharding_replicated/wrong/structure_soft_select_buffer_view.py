# expect: structure
"""Reads x's values through a buffer view (memoryview, which no JAX function sees) and sums them
in NumPy, then picks between that number and the sum of the placed copy by an index made with
arithmetic alone: 0 when the two sums are equal, 1 when they differ. In an ordinary call it
returns the sum NumPy made of the ORIGINAL x; the placed copy only decides the index."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    original = float(np.frombuffer(memoryview(x), dtype=np.float32).sum(dtype=np.float32))
    total = jnp.sum(placed, dtype=jnp.float32)
    distance = jnp.nan_to_num(jnp.abs(total - original), nan=0.0, posinf=0.0)
    index = (1 - jnp.exp(-1e30 * distance)).astype(jnp.int32)
    return jnp.stack([jnp.float32(original), total])[index]
