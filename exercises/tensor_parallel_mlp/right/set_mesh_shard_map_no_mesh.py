"""The style of JAX's current docs: `with jax.set_mesh(mesh):`, the operands placed with bare
jax.P specs, and a jitted jax.shard_map written without mesh= (the mesh in context is used)."""
import jax
from jax.sharding import AxisType

mesh = jax.make_mesh((8,), ("model",), axis_types=(AxisType.Explicit,))


@jax.jit
def _layer(x, w1, w2):
    def local(x, w1_block, w2_block):
        partial_out = jax.nn.relu(x @ w1_block) @ w2_block
        return jax.lax.psum(partial_out, "model")

    return jax.shard_map(local, in_specs=(jax.P(), jax.P(None, "model"), jax.P("model", None)),
                         out_specs=jax.P())(x, w1, w2)


def tensor_parallel_mlp(x, w1, w2):
    with jax.set_mesh(mesh):
        x = jax.device_put(x, jax.P())
        w1 = jax.device_put(w1, jax.P(None, "model"))
        w2 = jax.device_put(w2, jax.P("model", None))
        return _layer(x, w1, w2)
