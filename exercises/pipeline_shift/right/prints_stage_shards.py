"""Prints which stage holds which row after the shift (reads addressable_shards), then returns."""
import jax, numpy as np
from jax.sharding import Mesh, PartitionSpec as P

def pipeline_shift(x):
    mesh = Mesh(np.array(jax.devices()), ("stage",))
    shift = jax.jit(jax.shard_map(lambda b: jax.lax.ppermute(b, "stage", [(i, (i + 1) % 8) for i in range(8)]),
                                  mesh=mesh, in_specs=P("stage"), out_specs=P("stage")))
    out = shift(x)
    for shard in out.addressable_shards:
        print(shard.device, shard.index, np.asarray(shard.data)[:, :2])
    return out
