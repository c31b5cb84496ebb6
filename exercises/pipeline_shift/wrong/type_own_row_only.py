# expect: type
"""out_specs=PartitionSpec() (with check_vma=False): shard_map returns one stage's block, a
single row, instead of the eight rows."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("stage",))


def _hand_on(block):
    return jax.lax.ppermute(block, "stage", perm=[(i, (i + 1) % 8) for i in range(8)])


SHIFT = jax.jit(jax.shard_map(_hand_on, mesh=MESH, in_specs=PartitionSpec("stage"), out_specs=PartitionSpec(),
                              check_vma=False))


def pipeline_shift(x):
    return SHIFT(x)
