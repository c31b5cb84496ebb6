"""jax.make_mesh with axis_types=(AxisType.Explicit,), P for the spec, functools.partial(jnp.sum,
axis=0) as the jitted function."""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
column_total = jax.jit(partial(jnp.sum, axis=0), in_shardings=NamedSharding(mesh, P("data", None)),
                       out_shardings=NamedSharding(mesh, P()))


def column_sums(x):
    return column_total(x)
