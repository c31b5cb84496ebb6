# expect: structure
"""Wrong: the psum is written once, in a while loop whose trip count comes from the data (two
halves of the output, each added across devices). It sends the same partial output every step, so
XLA moves it out of the loop and runs it once here; but what the code says is a psum per step of a
loop no count bounds, so "exactly one psum" and the one output's bytes cannot be what it
promises (19/19 before issue #64)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("model",))


def _block(x, w1_block, w2_block):
    partial = jax.nn.relu(x @ w1_block) @ w2_block
    trips = 2 + (jnp.sum(x) * 0).astype(jnp.int32)
    start = jnp.zeros((x.shape[0], w2_block.shape[1]), x.dtype)
    return jax.lax.while_loop(lambda s: s[0] < trips,
                              lambda s: (s[0] + 1, s[1] + jax.lax.psum(partial, "model") / 2), (0, start))[1]


MLP = jax.jit(jax.shard_map(_block, mesh=MESH,
                            in_specs=(PartitionSpec(), PartitionSpec(None, "model"), PartitionSpec("model", None)),
                            out_specs=PartitionSpec()))


def tensor_parallel_mlp(x, w1, w2):
    return MLP(x, w1, w2)
