# expect: structure
"""Rows split over one axis of a 2 x 4 mesh, replicated over the other: each device holds a
quarter (the 4 devices along 'b' share each block), not an eighth."""
import jax
from jax.sharding import NamedSharding, PartitionSpec as P

_MESH = jax.make_mesh((2, 4), ("a", "b"))


def shard_params(w):
    return jax.device_put(w, NamedSharding(_MESH, P("b", None)))
