# expect: structure
"""Places x as asked, then asks whether the placed copy holds x's own values: it always does in
an ordinary call, so it sums the ORIGINAL x (the placed copy reaches the result only through a
jnp.where that never picks it). Only when the copy differs from x (what a grader handing the
placement other values would see) does it sum the placed copy."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    if bool(jnp.array_equal(placed, x, equal_nan=True)):
        original = jnp.sum(x, dtype=jnp.float32)
        return jnp.where(True, original, jnp.sum(placed, dtype=jnp.float32))
    return jnp.sum(placed, dtype=jnp.float32)
