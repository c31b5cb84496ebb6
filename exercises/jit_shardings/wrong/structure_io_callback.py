# expect: structure
"""The jitted function has the asked in_shardings and out_shardings, but its body sends the
matrix to the host with jax.experimental.io_callback and sums the columns with NumPy there."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def column_sums(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    on_host = lambda m: np.sum(np.asarray(m), axis=0, dtype=np.float32)
    summed = jax.jit(lambda m: io_callback(on_host, jax.ShapeDtypeStruct(m.shape[1:], jnp.float32), m),
                     in_shardings=NamedSharding(mesh, PartitionSpec("data", None)),
                     out_shardings=NamedSharding(mesh, PartitionSpec()))
    return summed(x)
