"""jax.make_mesh with axis_types=(AxisType.Auto,), the short spec P('data') for x, and the product
jitted at the call site."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


def sharded_matmul(x, w):
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
    rows = jax.device_put(x, NamedSharding(mesh, P("data")))
    everywhere = jax.device_put(w, NamedSharding(mesh, P()))
    return jax.jit(jnp.matmul)(rows, everywhere)
