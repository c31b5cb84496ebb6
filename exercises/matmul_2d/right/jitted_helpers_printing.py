"""Helpers for the mesh and the placement, a jitted einsum whose out_shardings names the
layout, and the worked example's habits: printing shardings and waiting for the result."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

GRID = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
MULTIPLY = jax.jit(lambda a, b: jnp.einsum("nk,km->nm", a, b),
                   out_shardings=NamedSharding(GRID, PartitionSpec("data", "model")))


def place(value, *spec):
    return jax.device_put(value, NamedSharding(GRID, PartitionSpec(*spec)))


def matmul_2d(x, w):
    rows, columns = place(x, "data"), place(w, None, "model")
    print("x:", rows.sharding, "w:", columns.sharding)
    product = MULTIPLY(rows, columns).block_until_ready()
    for shard in product.addressable_shards[:2]:
        print(shard.device, shard.index)
    return product
