# expect: structure
"""in_specs=PartitionSpec() copies all 8 gradients to every device; each averages them alone, and
the pmean of equal values changes nothing: right numbers, no device works on its own share."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))


def _whole(block):
    return jax.lax.pmean(jax.tree.map(lambda g: jnp.mean(g, axis=0), block), "data")


WHOLE = jax.jit(jax.shard_map(_whole, mesh=MESH, in_specs=PartitionSpec(), out_specs=PartitionSpec()))


def average_gradients(grads):
    return WHOLE(grads)
