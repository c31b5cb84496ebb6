"""Places x with jax.make_array_from_callback, each device's rows cut from x itself, then sums
every row: JAX's shard-by-shard way of building a split array."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def row_sums(x):
    sharding = NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P("data", None))
    placed = jax.make_array_from_callback(x.shape, sharding, lambda index: x[index])
    return jnp.sum(placed, axis=1)
