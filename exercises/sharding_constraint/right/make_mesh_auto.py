"""jax.make_mesh with axis_types=(AxisType.Auto,) (the compiler chooses every layout but the
constrained one), lax imported on its own."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
rows = NamedSharding(mesh, PartitionSpec("data", None))


def row_energies(x):
    def energies(m):
        squares = lax.with_sharding_constraint(m * m, rows)
        return jnp.sum(squares, axis=1)

    return jax.jit(energies)(x)
