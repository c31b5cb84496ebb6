"""Bare PartitionSpecs under jax.set_mesh: the mesh in context gives both the placement and the
reshard their mesh."""
import jax
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))


def reshard_columns(x):
    with jax.set_mesh(mesh):
        rows = jax.device_put(x, P("data", None))
        return jax.sharding.reshard(rows, P(None, "data"))
