# expect: structure
"""w1 and w2 placed split with jax.device_put and the layer jitted as plain jnp code: XLA inserts
an all-reduce by itself and the numbers are right, but no shard_map and no psum are written."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("model",))
LAYER = jax.jit(lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2, out_shardings=NamedSharding(MESH, P()))


def tensor_parallel_mlp(x, w1, w2):
    w1 = jax.device_put(w1, NamedSharding(MESH, P(None, "model")))
    w2 = jax.device_put(w2, NamedSharding(MESH, P("model", None)))
    return LAYER(x, w1, w2)
