# expect: structure
"""A mesh of the first 4 devices: each stage holds two rows, sends its last row on with a
ppermute and keeps the other: the right rows, on half the devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()[:4]), ("stage",))


def _shift_two_rows(block):
    arrived = jax.lax.ppermute(block[-1:], "stage", perm=[(i, (i + 1) % 4) for i in range(4)])
    return jnp.concatenate([arrived, block[:-1]], axis=0)


SHIFT = jax.jit(jax.shard_map(_shift_two_rows, mesh=MESH, in_specs=PartitionSpec("stage"),
                              out_specs=PartitionSpec("stage")))


def pipeline_shift(x):
    return SHIFT(x)
