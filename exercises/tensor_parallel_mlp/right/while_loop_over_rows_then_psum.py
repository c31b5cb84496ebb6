"""Each device's partial output built row by row in a jax.lax.while_loop bounded by x's number of
rows (a loop XLA knows the length of), then one psum after it."""
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
        out = jax.nn.relu(x[i] @ w1_block) @ w2_block
        return i + 1, partial.at[i].set(out)

    start = (jnp.int32(0), zeros)
    _, partial = jax.lax.while_loop(lambda state: state[0] < x.shape[0], row, start)
    return jax.lax.psum(partial, "model")


MLP = jax.jit(jax.shard_map(_block, mesh=MESH,
                            in_specs=(PartitionSpec(), PartitionSpec(None, "model"), PartitionSpec("model", None)),
                            out_specs=PartitionSpec()))


def tensor_parallel_mlp(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    return MLP(x, w1, w2)
