"""shard_map called eagerly (no jax.jit), the mesh, the permutation (built from the axis size)
and the per-stage function made inside the call."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def pipeline_shift(x):
    mesh = Mesh(np.array(jax.devices()), ("stage",))
    stages = mesh.shape["stage"]

    def send_to_next(block):
        return jax.lax.ppermute(block, "stage", perm=[(i, (i + 1) % stages) for i in range(stages)])

    return jax.shard_map(send_to_next, mesh=mesh, in_specs=PartitionSpec("stage"),
                         out_specs=PartitionSpec("stage"))(x)
