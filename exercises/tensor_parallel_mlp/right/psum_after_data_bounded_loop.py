"""Each device's partial output built row by row in a jax.lax.while_loop that stops at the first
row of x holding a NaN (so XLA does not know its length: here every row is read), then one psum
after the loop: the only collective is outside any loop, and runs once."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("model",))


def _block(x: jax.Array, w1_block: jax.Array, w2_block: jax.Array) -> jax.Array:
    # the partial output differs on each device: its running value is "varying" over 'model' too
    zeros = jax.lax.pcast(jnp.zeros((x.shape[0], w2_block.shape[1]), x.dtype), "model", to="varying")
    def row(state: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        i, partial = state
        return i + 1, partial.at[i].set(jax.nn.relu(x[i] @ w1_block) @ w2_block)

    def more(state: tuple[jax.Array, jax.Array]) -> jax.Array:
        i = state[0]
        return (i < x.shape[0]) & ~jnp.any(jnp.isnan(x[jnp.minimum(i, x.shape[0] - 1)]))

    start = (jnp.int32(0), zeros)
    _, partial = jax.lax.while_loop(more, row, start)
    return jax.lax.psum(partial, "model")


MLP = jax.jit(jax.shard_map(_block, mesh=MESH,
                            in_specs=(PartitionSpec(), PartitionSpec(None, "model"), PartitionSpec("model", None)),
                            out_specs=PartitionSpec()))


def tensor_parallel_mlp(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    return MLP(x, w1, w2)
