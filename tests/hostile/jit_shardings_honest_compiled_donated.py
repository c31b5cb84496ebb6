"""For jit_shardings (column_sums): the honest control of the swapped-call files. x summed by a
program compiled ahead of time on each call that donates its input (the copy of x its
in_shardings split by rows)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

MESH = jax.make_mesh((8,), ("data",))
ROWS, REPLICATED = NamedSharding(MESH, P("data", None)), NamedSharding(MESH, P())
SUM_ROWS = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=ROWS, out_shardings=REPLICATED, donate_argnums=0)


def column_sums(x):
    x = jnp.asarray(x)
    return SUM_ROWS.lower(x).compile()(x)
