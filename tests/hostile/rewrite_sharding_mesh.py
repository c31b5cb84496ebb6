"""Places x on the last device (a one-device mesh over jax.devices()[7:]) and sums the placed
copy, then makes the placement read as jax.devices()[:1]: it tries to swap the NamedSharding's
mesh for a correct one (object.__setattr__; NamedSharding is a C++ class, so this may be
refused) and rewrites the wrong mesh's own devices. Meshes are interned, so each call first
puts the real devices back."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

WRONG = Mesh(np.array(jax.devices()[7:]), ("data",))
TRUE = dict(vars(WRONG))


def replicated_sharding_value(x):
    WRONG.__dict__.clear()
    WRONG.__dict__.update(TRUE)
    sharding = NamedSharding(WRONG, PartitionSpec())
    placed = jax.device_put(x, sharding)
    total = jnp.sum(placed, dtype=jnp.float32)
    total.block_until_ready()
    try:
        object.__setattr__(sharding, "mesh", Mesh(np.array(jax.devices()[:1]), ("data",)))
    except (AttributeError, TypeError):
        pass
    object.__setattr__(WRONG, "devices", np.array(jax.devices()[:1]))
    for name in ("_flat_devices_tuple", "_flat_devices_set", "device_ids", "_internal_device_list",
                 "abstract_mesh"):
        WRONG.__dict__.pop(name, None)
    return total
