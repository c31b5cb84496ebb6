"""Deliberate in-process forgery (docs/threat-model.md, "What it does not promise"): finds the
grader's recorder through the garbage collector and, at the end of each call, rewrites the list
of events it recorded. The function really sums a copy of x placed on all 8 devices; the forged
record shows only a correct placement of x on jax.devices()[:1] (made too, but used for nothing)
feeding the sum. It prints a sharding, so jax.make_jaxpr cannot trace it and no traced program
contradicts the forged one. Every array it reports is genuine, so the buffers agree."""
import gc

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def recorder():
    for obj in gc.get_objects():
        if type(obj).__name__ == "Recorder" and isinstance(getattr(obj, "events", None), list):
            return obj
    return None


def replicated_sharding_value(x):
    decoy = jax.device_put(x, NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), PartitionSpec()))
    placed = jax.device_put(x, NamedSharding(Mesh(np.array(jax.devices()), ("data",)), PartitionSpec()))
    print("placed on", placed.sharding)
    total = jnp.sum(placed, dtype=jnp.float32)
    found = recorder()
    if found is not None:
        forged = []
        for event in found.events:
            if event[0] == "device_put" and any(p is placed for p in event[3]):
                continue  # the real placement disappears
            if event[0] == "jit":  # the sum now reads the decoy
                event = (event[0], event[1], [decoy if a is placed else a for a in event[2]], event[3])
            forged.append(event)
        found.events[:] = forged
    return total
