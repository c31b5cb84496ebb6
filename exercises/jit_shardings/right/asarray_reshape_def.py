"""The mesh from jax.sharding.Mesh(np.asarray(jax.devices()).reshape(-1)), fully qualified names,
and a named function jitted at the call site with in_shardings given as a one-element tuple."""
import jax
import jax.numpy as jnp
import numpy as np


def _sum_over_rows(matrix):
    return jnp.sum(matrix, axis=0, dtype=jnp.float32)


def column_sums(x):
    mesh = jax.sharding.Mesh(np.asarray(jax.devices()).reshape(-1), axis_names=("data",))
    rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data", None))
    whole = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    return jax.jit(_sum_over_rows, in_shardings=(rows,), out_shardings=whole)(x)
