# expect: type
"""out_specs=PartitionSpec('model') "because the layer is split over 'model'": after the psum
every device holds the whole output, and shard_map stacks the eight copies into (8n, d)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("model",))
SPECS = (P(), P(None, "model"), P("model", None))


def _local(x, w1_block, w2_block):
    return jax.lax.psum(jax.nn.relu(x @ w1_block) @ w2_block, "model")


LAYER = jax.jit(jax.shard_map(_local, mesh=MESH, in_specs=SPECS, out_specs=P("model")))


def tensor_parallel_mlp(x, w1, w2):
    return LAYER(x, w1, w2)
