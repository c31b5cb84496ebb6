# expect: type
"""Returns the product transposed, (x @ w).T: shape (m, n) instead of (n, m). On a square
probe it would have the declared shape; the probe is not square."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return (rows @ columns).T
