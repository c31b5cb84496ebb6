"""jax.make_mesh with Explicit axis types, P as the spec's short name, and jnp.matmul."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


def matmul_2d(x, w):
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit, AxisType.Explicit))
    x_rows = jax.device_put(x, NamedSharding(mesh, P("data", None)))
    w_cols = jax.device_put(w, NamedSharding(mesh, P(None, "model")))
    return jnp.matmul(x_rows, w_cols)
