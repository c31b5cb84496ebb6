"""Control for remove_observers_in_call.py and remove_observers_put_back.py: a correct solution
that touches JAX's machinery at the start of each call without removing anything
(jax.clear_caches(), and a look at which function dispatch._batched_device_put_impl is).
Must keep full marks."""
import jax
import jax.numpy as jnp
import numpy as np
from jax._src import dispatch
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    jax.clear_caches()
    assert callable(dispatch._batched_device_put_impl)
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed, dtype=jnp.float32)
