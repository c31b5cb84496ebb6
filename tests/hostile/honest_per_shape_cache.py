"""Control for probe_shape_only.py: a correct solution whose code depends on x's shape (a cache
of jitted sums, one per shape) but which places every input the same way. Must keep full marks."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

WANTED = NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), PartitionSpec())
_SUMS = {}


def replicated_sharding_value(x):
    summed = _SUMS.setdefault(x.shape, jax.jit(lambda v: jnp.sum(v, dtype=jnp.float32)))
    return summed(jax.device_put(x, WANTED))
