# expect: structure
"""A jit compiled ahead of time declares the shardings, but its sums are multiplied by 0 and the
answer is summed again from the original x beside it."""
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
MESH = Mesh(np.array(jax.devices()), ("data",))
_f = jax.jit(lambda m: jnp.sum(m, axis=0) * 0, in_shardings=NamedSharding(MESH, P("data", None)),
             out_shardings=NamedSharding(MESH, P()))
_c = {}
def column_sums(x):
    if x.shape not in _c:
        _c[x.shape] = _f.lower(jax.ShapeDtypeStruct(x.shape, x.dtype)).compile()
    return _c[x.shape](x) + jnp.sum(jnp.asarray(x), axis=0)
