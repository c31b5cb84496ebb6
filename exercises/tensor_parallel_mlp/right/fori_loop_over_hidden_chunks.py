"""The partial output summed over two chunks of this device's hidden units in a
jax.lax.fori_loop with Python bounds (a loop of known length), then one psum after it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("model",))
CHUNKS = 2


def _block(x: jax.Array, w1_block: jax.Array, w2_block: jax.Array) -> jax.Array:
    # the partial output differs on each device: its running value is "varying" over 'model' too
    zeros = jax.lax.pcast(jnp.zeros((x.shape[0], w2_block.shape[1]), x.dtype), "model", to="varying")
    width = w1_block.shape[1] // CHUNKS if w1_block.shape[1] % CHUNKS == 0 else w1_block.shape[1]
    steps = w1_block.shape[1] // width

    def add_chunk(i: jax.Array, partial: jax.Array) -> jax.Array:
        w1_chunk = jax.lax.dynamic_slice_in_dim(w1_block, i * width, width, axis=1)
        w2_chunk = jax.lax.dynamic_slice_in_dim(w2_block, i * width, width, axis=0)
        return partial + jax.nn.relu(x @ w1_chunk) @ w2_chunk

    partial = jax.lax.fori_loop(0, steps, add_chunk, zeros)
    return jax.lax.psum(partial, "model")


MLP = jax.jit(jax.shard_map(_block, mesh=MESH,
                            in_specs=(PartitionSpec(), PartitionSpec(None, "model"), PartitionSpec("model", None)),
                            out_specs=PartitionSpec()))


def tensor_parallel_mlp(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    return MLP(x, w1, w2)
