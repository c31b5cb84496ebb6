"""Places x correctly but sums the original, unplaced x; during its own call only, it swaps
builtins (id, isinstance, len, zip) for versions that lie about x and the placed copy: id(x)
answers id(placed), so an id-based dataflow taken during the call would link the sum to the
placed array. The real builtins are back before it returns. (builtins.type is left alone:
replacing it breaks every isinstance(obj, type) inside JAX.)"""
import builtins

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

REAL = {name: getattr(builtins, name) for name in ("id", "isinstance", "len", "zip")}


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))

    def fake_id(obj):
        return REAL["id"](placed if obj is x else obj)

    def fake_isinstance(obj, cls):
        return REAL["isinstance"](placed if obj is x else obj, cls)

    def fake_len(obj):
        return 1 if obj is mesh.devices else REAL["len"](obj)

    def fake_zip(*iterables, **kwargs):
        return REAL["zip"](*[[placed if item is x else item for item in it] if REAL["isinstance"](it, (list, tuple))
                             else it for it in iterables], **kwargs)

    builtins.id, builtins.isinstance, builtins.len, builtins.zip = fake_id, fake_isinstance, fake_len, fake_zip
    try:
        total = jnp.sum(x, dtype=jnp.float32)  # the unplaced x
    finally:
        for name, function in REAL.items():
            setattr(builtins, name, function)
    return total
