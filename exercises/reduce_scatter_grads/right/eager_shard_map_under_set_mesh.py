"""JAX's current style, run eagerly: a jax.shard_map without mesh= called directly (no jax.jit)
under `with jax.set_mesh(mesh):`, the mesh from jax.make_mesh with an Explicit axis, so the
gradients are placed with a bare PartitionSpec first (an Explicit axis reshards nothing itself)."""
import jax
from jax.sharding import AxisType, PartitionSpec as P

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def _scatter(rows):
    return jax.lax.psum_scatter(rows[0], "data", scatter_dimension=0, tiled=True)


def reduce_scatter_grads(grads):
    with jax.set_mesh(MESH):
        grads = jax.device_put(grads, P("data"))
        return jax.shard_map(_scatter, in_specs=P("data"), out_specs=P("data"))(grads)
