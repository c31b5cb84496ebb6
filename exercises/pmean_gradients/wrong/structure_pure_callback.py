# expect: structure
"""Inside shard_map, each device's gradient makes a round trip through the host
(jax.pure_callback and NumPy) before the pmean: a host round trip in the work the task names."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def through_host(g):
    return jax.pure_callback(np.asarray, jax.ShapeDtypeStruct(g.shape, g.dtype), g)


def average_gradients(grads):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    per_device = lambda block: jax.lax.pmean(jax.tree.map(lambda g: through_host(g[0]), block), "data")
    return jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=PartitionSpec("data"),
                                 out_specs=PartitionSpec()))(grads)
