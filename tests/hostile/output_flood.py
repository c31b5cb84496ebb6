"""Prints 256 MiB at import, then solves the task correctly."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

block = b"FLOOD-HEAD " + b"x" * ((1 << 20) - 11)
for _ in range(256):
    os.write(1, block)
sys.stderr.write("FLOOD-TAIL\n")
sys.stderr.flush()


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
