"""For jit_shardings (column_sums): the honest control of the swapped-call files. One program
compiled ahead of time per shape and reused: every call after the first, and twice within a call
(the sums of x, then of x's rows in reverse order, which are the same sums)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

MESH = jax.make_mesh((8,), ("data",))
ROWS, REPLICATED = NamedSharding(MESH, P("data", None)), NamedSharding(MESH, P())
SUM_ROWS = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=ROWS, out_shardings=REPLICATED)
COMPILED = {}


def column_sums(x):
    x = jnp.asarray(x)
    if x.shape not in COMPILED:
        COMPILED[x.shape] = SUM_ROWS.lower(x).compile()
    first = COMPILED[x.shape](x)
    again = COMPILED[x.shape](x[::-1])
    return jnp.where(first == again, first, again)
