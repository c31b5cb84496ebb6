"""jax.make_mesh (Explicit axes): shard_map then wants x placed as in_specs says, so it is placed
first with jax.device_put; prints the result's sharding and waits for it."""
import jax
from jax.sharding import NamedSharding, PartitionSpec

MESH = jax.make_mesh((8,), ("stage",))
ROWS = NamedSharding(MESH, PartitionSpec("stage"))


def _next_stage(block):
    return jax.lax.ppermute(block, "stage", [(i, (i + 1) % 8) for i in range(8)])


SHIFT = jax.jit(jax.shard_map(_next_stage, mesh=MESH, in_specs=PartitionSpec("stage"),
                              out_specs=PartitionSpec("stage")))


def pipeline_shift(x):
    out = SHIFT(jax.device_put(x, ROWS))
    print("shifted rows:", out.sharding)
    return out.block_until_ready()
