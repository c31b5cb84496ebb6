# expect: value
"""The pairs written (destination, source): perm=[((i + 1) % 8, i)], which sends stage i + 1's
row to stage i, the other direction."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def pipeline_shift(x):
    mesh = Mesh(np.array(jax.devices()), ("stage",))

    def shift(block):
        return jax.lax.ppermute(block, "stage", perm=[((i + 1) % 8, i) for i in range(8)])

    return jax.shard_map(shift, mesh=mesh, in_specs=PartitionSpec("stage"), out_specs=PartitionSpec("stage"))(x)
