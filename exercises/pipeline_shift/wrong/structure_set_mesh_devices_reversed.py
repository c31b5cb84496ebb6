# expect: structure
"""jax.set_mesh over the devices in reverse order, and jax.shard_map without mesh=: stage i is
device 7 - i, so each row moves to the wrong device although the rows come back in order."""
import jax
import numpy as np
from jax.sharding import AxisType, Mesh, PartitionSpec as P

REVERSED = Mesh(np.array(jax.devices()[::-1]), ("stage",), axis_types=(AxisType.Auto,))


def pipeline_shift(x):
    with jax.set_mesh(REVERSED):
        shift = jax.shard_map(lambda b: jax.lax.ppermute(b, "stage", [(i, (i + 1) % 8) for i in range(8)]),
                              in_specs=P("stage"), out_specs=P("stage"))
        return jax.jit(shift)(x)
