"""A Python loop calling one jitted step k times: the product is accumulated one outer product
(a column of x times a row of w) at a time, every step on the placed arrays with equal shapes."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

add_outer_product = jax.jit(lambda total, column, row: total + column @ row)


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    total = rows[:, :0] @ everywhere[:0]  # zeros of the product's shape, laid out as the product
    for i in range(x.shape[1]):
        total = add_outer_product(total, rows[:, i:i + 1], everywhere[i:i + 1])
    return total
