"""Control for forge_recorded_events.py: a correct solution that calls gc.collect() and walks
gc.get_objects() (counting live JAX arrays, as memory-debugging code does) without touching
anything it finds. Must keep full marks."""
import gc

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    gc.collect()
    live = sum(1 for obj in gc.get_objects() if isinstance(obj, jax.Array))
    assert live >= 0
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed, dtype=jnp.float32)
