"""jax.make_mesh with Auto axes; checks through addressable_shards that each of the 8 devices
holds one (rows / 2) x (columns / 4) block before squaring with jnp.square under jax.jit."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
BLOCKS = NamedSharding(MESH, PartitionSpec("data", "model"))


def square_blocks(x):
    placed = jax.device_put(x, BLOCKS)
    rows, columns = x.shape
    assert {shard.data.shape for shard in placed.addressable_shards} == {(rows // 2, columns // 4)}
    return jax.jit(jnp.square)(placed)
