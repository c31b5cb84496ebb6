"""Control for remove_observers_from_timer.py: a correct solution that guards its own work with
a SIGALRM timeout (signal.setitimer, cancelled before returning), as students copy from
"timeout decorator" recipes. Must keep full marks."""
import signal

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def _timed_out(signum, frame):
    raise TimeoutError("replicated_sharding_value took more than 4 s")


def replicated_sharding_value(x):
    previous = signal.signal(signal.SIGALRM, _timed_out)
    signal.setitimer(signal.ITIMER_REAL, 4.0)
    try:
        mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
        placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
        return jnp.sum(placed, dtype=jnp.float32)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
