# expect: structure
"""Wrong: the jitted function runs the shard_map (and its one psum) in a while loop whose trip
count comes from the data, adding half the output each step: the psum runs once per step of a
loop no count bounds, though XLA hoists it here (19/19 before issue #64)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("model",))


def _block(x, w1_block, w2_block):
    partial = jax.nn.relu(x @ w1_block) @ w2_block
    return jax.lax.psum(partial, "model")


BLOCK = jax.shard_map(_block, mesh=MESH,
                      in_specs=(PartitionSpec(), PartitionSpec(None, "model"), PartitionSpec("model", None)),
                      out_specs=PartitionSpec())


@jax.jit
def tensor_parallel_mlp(x, w1, w2):
    trips = 2 + (jnp.sum(x) * 0).astype(jnp.int32)
    start = jnp.zeros((x.shape[0], w2.shape[1]), x.dtype)
    return jax.lax.while_loop(lambda s: s[0] < trips, lambda s: (s[0] + 1, s[1] + BLOCK(x, w1, w2) / 2), (0, start))[1]
