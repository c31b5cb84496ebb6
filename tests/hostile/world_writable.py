"""Goes through every world-writable folder it is told of ({FOLDERS}: /tmp, /var/tmp, /dev/shm,
/run/lock and one the test made): says which files of others it sees there and leaves a file and
a folder of its own (made unwritable) in each; only then fills them with 1 MiB files until the
disk refuses or {STOP_MIB} MiB are written (a watch that stops it meanwhile finds something of it
in every folder). Then it answers correctly."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

CHUNK = b"x" * (1 << 20)
written = 0
for folder in {FOLDERS}:
    try:
        seen = sorted(name for name in os.listdir(folder) if not name.startswith("left-by-student"))
    except OSError as error:
        seen = [f"unlistable: {error.strerror}"]
    print("SAW", folder, seen, flush=True)
    try:
        with open(os.path.join(folder, "left-by-student.txt"), "w") as handle:
            handle.write("for the next student")
        nested = os.path.join(folder, "left-by-student-dir", "deeper")
        os.makedirs(nested)
        with open(os.path.join(nested, "data"), "w") as handle:
            handle.write("x" * 10000)
        os.chmod(os.path.dirname(nested), 0o500)
        print("LEFT", folder, flush=True)
    except OSError as error:
        print("REFUSED", folder, error.strerror, flush=True)
for folder in {FOLDERS}:
    number = 0
    while written < {STOP_MIB} << 20:
        try:
            with open(os.path.join(folder, f"left-by-student-fill-{number}.bin"), "wb") as handle:
                handle.write(CHUNK)
        except OSError as error:
            print("FULL", folder, error.strerror, flush=True)
            break
        written += len(CHUNK)
        number += 1
print(f"WROTE {written >> 20} MiB", flush=True)


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
