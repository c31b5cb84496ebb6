# expect: structure
"""Places the arguments as asked, then computes the product on the host with NumPy through
jax.experimental.io_callback, inside jax.jit with the asked out_shardings: the layout is right,
but no device computed it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def on_host(vx, vw):
    return np.asarray(vx) @ np.asarray(vw)


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))

    def compute(rows, everywhere):
        return io_callback(on_host, jax.ShapeDtypeStruct((x.shape[0], w.shape[1]), jnp.float32), rows, everywhere)

    return jax.jit(compute, out_shardings=NamedSharding(mesh, PartitionSpec("data", None)))(rows, everywhere)
