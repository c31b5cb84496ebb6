# expect: structure
"""in_specs PartitionSpec() for every operand: each device holds all of w1 and w2 and computes
the whole layer; nothing is split over 'model' and nothing is summed."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("model",))
SPECS = (P(), P(None, "model"), P("model", None))


def _local(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


LAYER = jax.jit(jax.shard_map(_local, mesh=MESH, in_specs=(P(), P(), P()), out_specs=P()))


def tensor_parallel_mlp(x, w1, w2):
    return LAYER(x, w1, w2)
