# expect: structure
"""A mesh over the first four devices: each averages two gradients, then pmean averages the four
partial means. The numbers are right, but the task is one gradient per device on all eight."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

HALF = Mesh(np.array(jax.devices()[:4]), ("data",))


def _average(block):
    return jax.lax.pmean(jax.tree.map(lambda g: jnp.mean(g, axis=0), block), "data")


AVERAGE = jax.jit(jax.shard_map(_average, mesh=HALF, in_specs=PartitionSpec("data"), out_specs=PartitionSpec()))


def average_gradients(grads):
    return AVERAGE(grads)
