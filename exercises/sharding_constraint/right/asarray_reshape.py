"""The mesh from jax.sharding.Mesh(np.asarray(jax.devices()).reshape(8)), fully qualified names,
and the constrained squares summed with jnp.einsum."""
import jax
import jax.numpy as jnp
import numpy as np

mesh = jax.sharding.Mesh(np.asarray(jax.devices()).reshape(8), ("data",))


@jax.jit
def _energies(m):
    y = jax.lax.with_sharding_constraint(
        jnp.multiply(m, m), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data", None)))
    return jnp.einsum("rc->r", y)


def row_energies(x):
    return _energies(x)
