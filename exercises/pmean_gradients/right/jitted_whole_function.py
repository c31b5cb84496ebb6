"""The whole function under @jax.jit, the mesh built from the device list, a dict comprehension
instead of jax.tree.map, and the axis named as a tuple."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

mesh = Mesh(jax.devices(), axis_names=("data",))


@jax.jit
def average_gradients(grads):
    def body(block):
        return {k: jax.lax.pmean(v.reshape(v.shape[1:]), axis_name=("data",)) for k, v in block.items()}
    return jax.shard_map(body, mesh=mesh, in_specs=P("data"), out_specs=P())(grads)
