"""A forged record (issue #55 point 7): the step replicates x over all eight devices
(named_sharding_replicated's wrong/structure_all_devices), and a sys.setprofile hook rewrites
the child's reply as it is framed so that everything it says of placements and returned
arrays names a mesh of device 0 alone: the cheap placements, the call's program, the returned
leaf and its buffers, and the traced program. With ``ACCOUNT = True`` the
account handed to the witness is rewritten the same way, so the witness places x on device 0
too; the program it runs still returns its value on all eight."""
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

ACCOUNT = False
EVERY = list(range(len(jax.devices())))


def _one_device(value):
    if isinstance(value, dict):
        if value.get("type") == "NamedSharding" and value.get("mesh_devices") == EVERY:
            value.update(mesh_devices=[0], mesh_shape=[1])
        for key in ("shards", "buffers"):
            if isinstance(value.get(key), list):
                value[key] = [s for s in value[key] if s.get("device", 0) == 0] if key == "shards" else \
                    [b for b in value[key] if b.get("device", 0) == 0]
        for key, inner in value.items():
            if key != "account" or ACCOUNT:
                _one_device(inner)
    elif isinstance(value, list):
        for inner in value:
            _one_device(inner)


def _edit(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "frame":
        message = frame.f_locals.get("message")
        if isinstance(message, dict):
            _one_device(message)


sys.setprofile(_edit)


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed)
