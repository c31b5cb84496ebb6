"""jax.make_mesh with axis_types=(AxisType.Explicit,) over the first device, and P for the spec."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


def replicated_sharding_value(x):
    mesh = jax.make_mesh((1,), ("data",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:1])
    placed = jax.device_put(x, NamedSharding(mesh, P()))
    return jnp.sum(placed, dtype=jnp.float32)
