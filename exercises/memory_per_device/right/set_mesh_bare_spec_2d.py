"""A 2 x 4 mesh set with `with jax.set_mesh(mesh):` and a bare PartitionSpec naming both axes:
each device holds one (n/2, m/4) block."""
import jax
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("rows", "cols"), axis_types=(AxisType.Explicit, AxisType.Explicit))


def shard_params(w):
    with jax.set_mesh(mesh):
        return jax.device_put(w, P("rows", "cols"))
