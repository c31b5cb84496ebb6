# expect: structure
"""Places the arguments as asked, then computes the product on the host with NumPy through
jax.pure_callback, inside jax.jit with the asked out_shardings: the layout is right, but no
device computed it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def on_host(vx, vw):
    return np.asarray(vx) @ np.asarray(vw)


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))

    def compute(rows, columns):
        return jax.pure_callback(on_host, jax.ShapeDtypeStruct((x.shape[0], w.shape[1]), jnp.float32), rows, columns)

    return jax.jit(compute, out_shardings=NamedSharding(mesh, PartitionSpec("data", "model")))(rows, columns)
