"""A bare PartitionSpec in the constraint inside the jitted function, under `with jax.set_mesh(mesh):`
on an Auto mesh: the constraint names no mesh (it is traced with the abstract one), the mesh in
context is the one used."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))


@jax.jit
def _energies(m):
    y = jax.lax.with_sharding_constraint(m * m, P("data", None))
    return jnp.sum(y, axis=1)


def row_energies(x):
    with jax.set_mesh(mesh):
        return _energies(x)
