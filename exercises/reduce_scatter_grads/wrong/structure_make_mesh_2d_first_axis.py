# expect: structure
"""jax.make_mesh((2, 4), ('data', 'model')) with Explicit axes, and shard_map over 'data' only:
each block of four gradients is summed on the device, and psum_scatter over 'data' splits the
sum in two halves: right values, on a 2 x 4 mesh, each device receiving half of the sum."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

MESH = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit, AxisType.Explicit))


def _scatter(rows):
    return jax.lax.psum_scatter(jnp.sum(rows, axis=0), "data", scatter_dimension=0, tiled=True)


def reduce_scatter_grads(grads):
    placed = jax.device_put(grads, NamedSharding(MESH, P("data")))
    return jax.jit(jax.shard_map(_scatter, mesh=MESH, in_specs=P("data"), out_specs=P("data"),
                                 check_vma=False))(placed)
