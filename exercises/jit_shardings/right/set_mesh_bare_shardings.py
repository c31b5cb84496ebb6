"""jax.jit's in_shardings and out_shardings as bare jax.P specs, under `with jax.set_mesh(mesh):`
(Auto axes, so the unplaced x is laid out by the jit itself)."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType

mesh = jax.make_mesh((jax.device_count(),), ("data",), axis_types=(AxisType.Auto,))


def column_sums(x):
    with jax.set_mesh(mesh):
        return jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=jax.P("data", None), out_shardings=jax.P())(x)
