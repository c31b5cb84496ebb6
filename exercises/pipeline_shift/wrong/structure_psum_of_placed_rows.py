# expect: structure
"""Each stage writes its row into an (8, n) block of zeros at position i + 1, a psum adds the
eight blocks (the whole shifted x on every stage), and each stage keeps its own row: the right
rows through an all-reduce of all of x."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("stage",))


def _psum_shift(block):
    stage = jax.lax.axis_index("stage")
    placed = jax.lax.dynamic_update_slice_in_dim(jnp.zeros((8, block.shape[1]), block.dtype), block,
                                                 (stage + 1) % 8, axis=0)
    everything = jax.lax.psum(placed, "stage")
    return jax.lax.dynamic_slice_in_dim(everything, stage, 1, axis=0)


SHIFT = jax.jit(jax.shard_map(_psum_shift, mesh=MESH, in_specs=PartitionSpec("stage"),
                              out_specs=PartitionSpec("stage")))


def pipeline_shift(x):
    return SHIFT(x)
