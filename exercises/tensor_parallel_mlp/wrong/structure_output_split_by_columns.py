# expect: structure
"""out_specs PartitionSpec(None, 'model') with a psum_scatter: each device keeps d/8 columns of
the summed output. The right numbers, but the output is not replicated and no psum runs.
(On the probe d = 4 does not split 8 ways, so the columns are padded to 8 first.)"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("model",))
SPECS = (P(), P(None, "model"), P("model", None))


def _local(x, w1_block, w2_block):
    partial_out = jax.nn.relu(x @ w1_block) @ w2_block
    d = partial_out.shape[1]
    padded = jnp.pad(partial_out, ((0, 0), (0, (-d) % 8)))
    return jax.lax.psum_scatter(padded, "model", scatter_dimension=1, tiled=True)


LAYER = jax.jit(jax.shard_map(_local, mesh=MESH, in_specs=SPECS, out_specs=P(None, "model")))


def tensor_parallel_mlp(x, w1, w2):
    return LAYER(x, w1, w2)[:, :x.shape[1]]
