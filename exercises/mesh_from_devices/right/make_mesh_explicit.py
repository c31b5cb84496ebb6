"""jax.make_mesh with axis_types=(Explicit, Explicit), aliased imports and P."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import NamedSharding as NS
from jax.sharding import PartitionSpec as P


def replicate_on_mesh(x):
    mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2,
                         devices=jax.devices()[:4])
    placed = jax.device_put(x, NS(mesh, P()))
    return jnp.multiply(placed, mesh.size)
