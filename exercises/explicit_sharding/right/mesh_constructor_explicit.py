"""The mesh built with the Mesh constructor, its axis declared Explicit by hand, and a helper that
checks the type before and after the move (a jax.typeof assertion, as a test would)."""
import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P


def _on(mesh, *spec):
    return NamedSharding(mesh, P(*spec))


def reshard_columns(x):
    mesh = Mesh(np.array(jax.devices()), ("data",), axis_types=(AxisType.Explicit,))
    rows = jax.device_put(x, _on(mesh, "data", None))
    assert jax.typeof(rows).sharding.spec == P("data", None)
    columns = jax.sharding.reshard(rows, _on(mesh, None, "data"))
    assert jax.typeof(columns).sharding.spec == P(None, "data")
    return columns
