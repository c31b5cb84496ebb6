"""`with jax.set_mesh(mesh):` around a jitted jax.shard_map that names no mesh, on an Auto mesh
from jax.make_mesh: the gradients need no placing first."""
from functools import partial

import jax
from jax.sharding import AxisType, PartitionSpec as P

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))


@jax.jit
@partial(jax.shard_map, in_specs=P("data"), out_specs=P("data"))
def _reduce_scatter(rows):
    return jax.lax.psum_scatter(rows[0], "data", scatter_dimension=0, tiled=True)


def reduce_scatter_grads(grads):
    with jax.set_mesh(MESH):
        return _reduce_scatter(grads)
