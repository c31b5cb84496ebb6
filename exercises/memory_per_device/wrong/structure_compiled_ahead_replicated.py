# expect: structure
"""An identity compiled ahead of time whose out_shardings replicate: every device holds the
whole array."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

_MESH = Mesh(np.array(jax.devices()), ("rows",))
_compiled = {}


def shard_params(w):
    if w.shape not in _compiled:
        _compiled[w.shape] = jax.jit(lambda v: v, out_shardings=NamedSharding(_MESH, P())).lower(w).compile()
    return _compiled[w.shape](w)
