"""jax.shard_map without mesh= under `with jax.set_mesh(mesh):`, called eagerly on the dict."""
import jax
from jax.sharding import AxisType, PartitionSpec as P

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))


def _mean_of_own_rows(block):
    return jax.lax.pmean(jax.tree.map(lambda g: g[0], block), "data")


def average_gradients(grads):
    with jax.set_mesh(MESH):
        return jax.shard_map(_mean_of_own_rows, in_specs=P("data"), out_specs=P())(grads)
