# expect: structure
"""Places the arguments as asked, then computes the sum on the host with NumPy through
jax.pure_callback, inside jax.jit with the asked out_shardings: the layout is right, but no
device computed it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def on_host(vx):
    return np.sum(np.asarray(vx), dtype=np.float32)


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))

    def compute(placed):
        return jax.pure_callback(on_host, jax.ShapeDtypeStruct((), jnp.float32), placed)

    return jax.jit(compute, out_shardings=NamedSharding(mesh, PartitionSpec()))(placed)
