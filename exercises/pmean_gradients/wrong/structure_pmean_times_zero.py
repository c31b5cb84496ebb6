# expect: structure
"""Averages the gradients with NumPy on the host and adds 0 times a pmean inside shard_map: the
collective is there and reads the split gradients, but the average does not depend on it."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def average_gradients(grads):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    pmeaned = jax.shard_map(lambda block: jax.tree.map(lambda g: jax.lax.pmean(g[0], "data"), block), mesh=mesh,
                            in_specs=PartitionSpec("data"), out_specs=PartitionSpec())(grads)
    return jax.tree.map(lambda g, p: np.mean(np.asarray(g), axis=0, dtype=np.float32) + 0 * p, grads, pmeaned)
