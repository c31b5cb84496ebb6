"""For tensor_parallel_mlp: the honest control of the swapped-call files. The shard_map program
compiled ahead of time once per shape (``jax.jit(f).lower(...).compile()``) and called."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("model",))
MLP = jax.jit(jax.shard_map(lambda x, w1, w2: jax.lax.psum(jax.nn.relu(x @ w1) @ w2, "model"), mesh=MESH,
                            in_specs=(P(), P(None, "model"), P("model", None)), out_specs=P()))
COMPILED = {}


def tensor_parallel_mlp(x, w1, w2):
    key = (x.shape, w1.shape)
    if key not in COMPILED:
        COMPILED[key] = MLP.lower(x, w1, w2).compile()
    return COMPILED[key](x, w1, w2)
