"""jax.make_mesh with explicit axis types, and P as the spec's short name."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def sharded_matmul(x, w):
    mesh = jax.make_mesh((len(jax.devices()),), ("data",), axis_types=(AxisType.Explicit,))
    rows = jax.device_put(x, jax.NamedSharding(mesh, P("data", None)))
    everywhere = jax.device_put(w, jax.NamedSharding(mesh, P()))
    return jnp.matmul(rows, everywhere)
