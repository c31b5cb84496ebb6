"""jax.make_mesh for both meshes, one with Explicit and one with Auto axis types: the axis type
changes how jit propagates shardings, not where device_put puts the data."""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec


def move_to_second_half(x):
    first = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:4])
    second = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Auto,), devices=jax.devices()[4:])
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(placed, NamedSharding(second, PartitionSpec("data")))
