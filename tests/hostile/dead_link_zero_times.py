"""A dead dataflow link: the sum of the original x, plus 0 times a (finite) function of the sum
of the placed x. The link from the placement to the result exists; the result never depends
on it, and every value is right."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    placed = jax.device_put(x, NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), PartitionSpec()))
    return jnp.sum(x) + 0 * jnp.tanh(jnp.nan_to_num(jnp.sum(placed)))  # always finite: 0 times it is 0
