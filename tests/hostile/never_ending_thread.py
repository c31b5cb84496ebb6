"""Starts a non-daemon thread that never ends, then solves the task correctly."""
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def forever():
    while True:
        time.sleep(0.05)


threading.Thread(target=forever, daemon=False).start()


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
