# expect: structure
"""Wrong: the psum runs twice, in a while loop whose trip count comes from the data (two halves
of the partial output, each added across devices), so "exactly one psum" is not what runs; the
loop hides the second run from a count of the program's equations (``acc * 0.0`` keeps XLA from
hoisting the psum out of the loop: it reads the carry)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("model",))


def _block(x: jax.Array, w1_block: jax.Array, w2_block: jax.Array) -> jax.Array:
    partial = jax.nn.relu(x @ w1_block) @ w2_block
    trips = 2 + (jnp.sum(x) * 0).astype(jnp.int32)  # 2, but only the data knows it
    return jax.lax.fori_loop(0, trips, lambda i, acc: acc + jax.lax.psum(partial * 0.5 + acc * 0.0, "model"),
                             jnp.zeros(partial.shape, partial.dtype))


MLP = jax.jit(jax.shard_map(_block, mesh=MESH,
                            in_specs=(PartitionSpec(), PartitionSpec(None, "model"), PartitionSpec("model", None)),
                            out_specs=PartitionSpec()))


def tensor_parallel_mlp(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    return MLP(x, w1, w2)
