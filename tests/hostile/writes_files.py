"""Tries to damage the grader, the exercise and other students' files, then solves the task."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

TARGETS = {TARGETS}
for path in TARGETS:
    for how in ("append", "replace", "chmod", "remove"):
        try:
            if how == "append":
                with open(path, "a") as handle:
                    handle.write("\nHOSTILE-WRITE\n")
            elif how == "replace":
                with open(path + ".new", "w") as handle:
                    handle.write("HOSTILE-WRITE\n")
                os.replace(path + ".new", path)
            elif how == "chmod":
                os.chmod(path, 0o777)
            else:
                os.remove(path)
            print("DAMAGED", how, path)
        except OSError as error:
            print("BLOCKED", how, path, type(error).__name__)


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
