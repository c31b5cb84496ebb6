"""jax.set_mesh used as a global setter at import (not as a context manager), and an eager
jax.shard_map without mesh=: it runs on the mesh set globally."""
import jax
import numpy as np
from jax.sharding import AxisType, Mesh, PartitionSpec as P

jax.set_mesh(Mesh(np.array(jax.devices()), ("stage",), axis_types=(AxisType.Auto,)))
RING = [(i, (i + 1) % 8) for i in range(8)]


def pipeline_shift(x):
    shift = jax.shard_map(lambda block: jax.lax.ppermute(block, "stage", RING), in_specs=P("stage"),
                          out_specs=P("stage"))
    return shift(x)
