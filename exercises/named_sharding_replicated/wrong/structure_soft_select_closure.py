# expect: structure
"""The soft select of structure_soft_select_on_difference.py, inside a jitted function that
reads x only through its closure (x is a constant of the compiled program, never an operand):
an index that is exactly 0 when the placed copy equals x and 1 when it differs anywhere, made
with arithmetic alone. In an ordinary call the ORIGINAL x is summed."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))

    @jax.jit
    def pick(p):
        distance = jnp.sum(jnp.nan_to_num(jnp.abs(p - x), nan=0.0, posinf=0.0))
        index = (1 - jnp.exp(-1e30 * distance)).astype(jnp.int32)
        return jnp.stack([jnp.sum(x, dtype=jnp.float32), jnp.sum(p, dtype=jnp.float32)])[index]

    return pick(placed)
