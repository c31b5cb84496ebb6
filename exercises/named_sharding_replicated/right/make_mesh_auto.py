"""jax.make_mesh with axis_types=(AxisType.Auto,), the sharding built once at import, and the sum
in a jitted helper."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((1,), ("data",), axis_types=(AxisType.Auto,), devices=jax.devices()[:1])
REPLICATED = NamedSharding(MESH, PartitionSpec())


@jax.jit
def total(values):
    return jnp.sum(values)


def replicated_sharding_value(x):
    return total(jax.device_put(x, REPLICATED))
