"""The product jitted and compiled ahead of time once per pair of shapes, on the placed arrays."""
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
MESH = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
_c = {}
def matmul_2d(x, w):
    xs = jax.device_put(x, NamedSharding(MESH, P("data", None)))
    ws = jax.device_put(w, NamedSharding(MESH, P(None, "model")))
    k = (xs.shape, ws.shape)
    if k not in _c:
        _c[k] = jax.jit(lambda a, b: a @ b).lower(xs, ws).compile()
    return _c[k](xs, ws)
