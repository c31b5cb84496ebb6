"""The sum compiled ahead of time once per shape and kept, on the placed x."""
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import numpy as np
_sum = {}
def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, P()))
    key = placed.shape
    if key not in _sum:
        _sum[key] = jax.jit(lambda a: jnp.sum(a, dtype=jnp.float32)).lower(placed).compile()
    return _sum[key](placed)
