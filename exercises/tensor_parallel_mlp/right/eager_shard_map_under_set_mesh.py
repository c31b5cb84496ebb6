"""JAX's current style, run eagerly: `with jax.set_mesh(mesh):` on an Auto mesh from
jax.make_mesh, the weights placed with bare PartitionSpecs, and a jax.shard_map without mesh=
called directly (no jax.jit): the mesh in context is the one it runs on."""
import jax
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((8,), ("model",), axis_types=(AxisType.Auto,))


def _local(x, w1_block, w2_block):
    return jax.lax.psum(jax.nn.relu(x @ w1_block) @ w2_block, "model")


def tensor_parallel_mlp(x, w1, w2):
    with jax.set_mesh(mesh):
        w1 = jax.device_put(w1, P(None, "model"))
        w2 = jax.device_put(w2, P("model", None))
        return jax.shard_map(_local, in_specs=(P(), P(None, "model"), P("model", None)), out_specs=P())(x, w1, w2)
