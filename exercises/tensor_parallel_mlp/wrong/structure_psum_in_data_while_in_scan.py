# expect: structure
"""Wrong: a scan of two steps whose body runs a while loop of data-dependent length (two quarters
of the output per scan step), the psum written once inside it and moved by XLA out of both loops:
a collective written in a loop of unknown length, in a scan body (19/19 before issue #64)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("model",))


def _block(x, w1_block, w2_block):
    partial = jax.nn.relu(x @ w1_block) @ w2_block
    trips = 2 + (jnp.sum(x) * 0).astype(jnp.int32)

    def step(total, _):
        added = jax.lax.while_loop(lambda s: s[0] < trips,
                                   lambda s: (s[0] + 1, s[1] + jax.lax.psum(partial, "model") / 4), (0, total))[1]
        return added, None

    return jax.lax.scan(step, jnp.zeros((x.shape[0], w2_block.shape[1]), x.dtype), length=2)[0]


MLP = jax.jit(jax.shard_map(_block, mesh=MESH,
                            in_specs=(PartitionSpec(), PartitionSpec(None, "model"), PartitionSpec("model", None)),
                            out_specs=PartitionSpec()))


def tensor_parallel_mlp(x, w1, w2):
    return MLP(x, w1, w2)
