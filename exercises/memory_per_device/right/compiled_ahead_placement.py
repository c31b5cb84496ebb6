"""An identity jitted with out_shardings over a 2 x 4 mesh (rows over both axes), compiled ahead
of time once per shape and kept."""
import jax
from jax.sharding import NamedSharding, PartitionSpec as P

_MESH = jax.make_mesh((2, 4), ("a", "b"))
_compiled = {}


def shard_params(w):
    if w.shape not in _compiled:
        place = jax.jit(lambda v: v, out_shardings=NamedSharding(_MESH, P(("a", "b"), None)))
        _compiled[w.shape] = place.lower(w).compile()
    return _compiled[w.shape](w)
