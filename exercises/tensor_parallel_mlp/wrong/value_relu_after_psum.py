# expect: value
"""The psum placed before the relu: the partial outputs x @ w1_block @ w2_block are added first
and relu is applied to the sum, which is relu(x @ w1 @ w2), not relu(x @ w1) @ w2."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("model",))
SPECS = (P(), P(None, "model"), P("model", None))


def _local(x, w1_block, w2_block):
    return jax.nn.relu(jax.lax.psum(x @ w1_block @ w2_block, "model"))


LAYER = jax.jit(jax.shard_map(_local, mesh=MESH, in_specs=SPECS, out_specs=P()))


def tensor_parallel_mlp(x, w1, w2):
    return LAYER(x, w1, w2)
