"""Logs from inside the compiled program, as JAX's debugging docs show: a jax.debug.print of
each device's block shape in the shard_map body, and one of the partial output before the
psum. Neither printed value feeds the result."""
import jax
from jax.sharding import PartitionSpec as P

MESH = jax.make_mesh((8,), ("model",), axis_types=(jax.sharding.AxisType.Auto,))


def _local(x, w1_block, w2_block):
    jax.debug.print("w1 block {shape}", shape=w1_block.shape)
    partial = jax.nn.relu(x @ w1_block) @ w2_block
    jax.debug.print("partial output mean {m}", m=partial.mean())
    return jax.lax.psum(partial, "model")


LAYER = jax.jit(jax.shard_map(_local, mesh=MESH, in_specs=(P(), P(None, "model"), P("model", None)),
                              out_specs=P()))


def tensor_parallel_mlp(x, w1, w2):
    return LAYER(x, w1, w2)
