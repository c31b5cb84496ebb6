"""Leaves a tree 5,000 folders deep in its working folder (far deeper than a path can name),
with folders it made read-only, files it made unwritable, links to a file of the grader and
names that are not UTF-8, then solves the task. Removing it must neither crash the grader nor
leave it behind, nor touch what the links point to."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DEPTH = 5000
LINK_TO = {LINK_TO}


def _build() -> None:
    folder = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    for level in range(DEPTH):
        os.mkdir("d", dir_fd=folder)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        if level % 500 == 0:
            os.symlink(LINK_TO, "link", dir_fd=folder)
            unwritable = os.open(b"\xff\xfe-not-utf8", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=folder)
            os.write(unwritable, b"data")
            os.fchmod(unwritable, 0)
            os.close(unwritable)
        if level % 1000 == 999:
            os.fchmod(folder, 0o500)  # read-only once its entries are made
        os.close(folder)
        folder = inner
    os.close(folder)
    print(f"BUILT {DEPTH} levels", flush=True)


_build()


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
