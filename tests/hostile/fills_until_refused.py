"""Writes 1 MiB files into every place it may write ({FOLDERS}: its working folder, /tmp,
/var/tmp, /dev/shm, /run/lock and the grader's own disk) until each refuses (a full disk, or
too many files), on every call; then answers correctly. Past {STOP_MIB} MiB in all it stops
anyway: where no private scratch space holds it (no mount namespace), the grader's watch is
what must stop it, and this keeps a test from filling the machine meanwhile."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

CHUNK = b"x" * (1 << 20)
written = 0


def _fill() -> None:
    global written
    for folder in {FOLDERS}:
        number = 0
        while written < {STOP_MIB} << 20:
            try:
                with open(os.path.join(folder, f"left-by-filler-{os.getpid()}-{number}.bin"), "wb") as handle:
                    handle.write(CHUNK)
            except OSError as error:
                print("FULL", folder, error.strerror, flush=True)
                break
            written += len(CHUNK)
            number += 1
    print(f"WROTE {written >> 20} MiB", flush=True)


def replicated_sharding_value(x):
    _fill()
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
